package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
	godigest "github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// registryStores are the registry's two kinds of store: the test
// environment's backend (under the server's data directory, unless it is
// containerd) and containerd's own content store, where a repository's
// tags are the backend's images (host-native).
var registryStores = []struct {
	name string
	env  []string
}{
	{"environment", nil},
	{"containerd", []string{"CORNUS_DEPLOY_BACKEND=containerd", "CORNUS_CONTAINERD_ADDRESS=/run/cornus-containerd/containerd.sock"}},
}

// TestRegistryTenants: the registry on /v2/ needs a client token
// (Basic, or the Bearer its token endpoint hands back); a repository is
// its first pusher's, and to another tenant it does not exist: every
// route, tried as bob against alice's repository, reads, writes and
// lists nothing of it. A pushed name is its pusher's on every front end:
// bob can neither run it nor load over it. On a backend's own store the
// operator's images are shared read-only: no tenant pushes over or
// deletes them.
func TestRegistryTenants(t *testing.T) {
	for _, st := range registryStores {
		t.Run(st.name, func(t *testing.T) { registryTenants(t, newTestServerWith(t, st.env...)) })
	}
}

func registryTenants(t *testing.T, ts *testServer) {
	aliceRepo, bobRepo := uniqueProject("alice/app-"), uniqueProject("bob/x-")
	alice := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.alice}
	bob := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.bob}
	anon := registrytest.Client{T: t, Base: ts.http.URL}

	code, hdr, _ := anon.Do("GET", "/v2/", nil)
	if code != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), `Bearer realm="`+ts.http.URL+`/v2/token"`) {
		t.Fatalf("anonymous /v2/: %d %q, want 401 with the token challenge", code, hdr.Get("WWW-Authenticate"))
	}
	if code, _, _ := (registrytest.Client{T: t, Base: ts.http.URL, Token: "not-a-token"}).Do("GET", "/v2/", nil); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	ct, err := ts.srv.tokens.mintCaretaker(grant{Tenant: "alice", Project: "p", Epoch: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := (registrytest.Client{T: t, Base: ts.http.URL, Token: ct}).Do("GET", "/v2/", nil); code != http.StatusUnauthorized {
		t.Fatalf("a caretaker token: %d, want 401", code)
	}
	// The token flow Docker and containerd follow.
	code, _, body := alice.Do("GET", "/v2/token?service=cornus&scope=repository:alice/app:pull,push", nil)
	var tok struct{ Token string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &tok) != nil || tok.Token == "" {
		t.Fatalf("token endpoint: %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", ts.http.URL+"/v2/", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/v2/ with the handed-back Bearer token: %v %v", resp, err)
	}

	layer := registrytest.Layer(map[string]string{"secret": "alice's secret layer"})
	layerD, manD := alice.PushImage(aliceRepo, "1", layer)
	t.Cleanup(func() { alice.DeleteRepo(aliceRepo) })
	if code, _, body := alice.Do("GET", "/v2/"+aliceRepo+"/blobs/"+layerD.String(), nil); code != http.StatusOK || body != string(layer) {
		t.Fatalf("alice pulls her layer: %d %q", code, body)
	}

	mustNot := func(what string, code int, body string, want ...int) {
		t.Helper()
		for _, w := range want {
			if code == w {
				if strings.Contains(body, "secret") {
					t.Errorf("%s: the answer holds alice's content: %s", what, body)
				}
				return
			}
		}
		t.Errorf("%s: %d %s, want one of %v", what, code, body, want)
	}
	c, _, b := bob.Do("GET", "/v2/"+aliceRepo+"/manifests/1", nil)
	mustNot("bob gets alice's manifest by tag", c, b, http.StatusNotFound)
	c, _, b = bob.Do("GET", "/v2/"+aliceRepo+"/manifests/"+manD.String(), nil)
	mustNot("bob gets alice's manifest by digest", c, b, http.StatusNotFound)
	c, _, b = bob.Do("GET", "/v2/"+aliceRepo+"/blobs/"+layerD.String(), nil)
	mustNot("bob gets alice's blob", c, b, http.StatusNotFound)
	c, _, b = bob.Do("HEAD", "/v2/"+aliceRepo+"/blobs/"+layerD.String(), nil)
	mustNot("bob heads alice's blob", c, b, http.StatusNotFound)
	c, _, b = bob.Do("GET", "/v2/"+aliceRepo+"/tags/list", nil)
	mustNot("bob lists alice's tags", c, b, http.StatusNotFound)
	c, _, b = bob.Do("GET", "/v2/"+aliceRepo+"/referrers/"+manD.String(), nil)
	mustNot("bob lists alice's referrers", c, b, http.StatusNotFound)
	c, _, b = bob.Do("POST", "/v2/"+aliceRepo+"/blobs/uploads/", nil)
	mustNot("bob starts an upload to alice's repository", c, b, http.StatusNotFound)
	c, _, b = bob.Do("PUT", "/v2/"+aliceRepo+"/manifests/1", []byte(`{"schemaVersion":2}`), "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	mustNot("bob overwrites alice's tag", c, b, http.StatusNotFound)
	c, _, b = bob.Do("DELETE", "/v2/"+aliceRepo+"/manifests/"+manD.String(), nil)
	mustNot("bob deletes alice's manifest", c, b, http.StatusNotFound)
	c, _, b = bob.Do("DELETE", "/v2/"+aliceRepo+"/blobs/"+layerD.String(), nil)
	mustNot("bob deletes alice's blob", c, b, http.StatusNotFound)
	// A mount from alice's repository is not made (an upload starts
	// instead, as the spec says) and her blob stays out of bob's.
	c, _, b = bob.Do("POST", "/v2/"+bobRepo+"/blobs/uploads/?mount="+layerD.String()+"&from="+aliceRepo, nil)
	mustNot("bob mounts alice's blob", c, b, http.StatusAccepted)
	c, _, b = bob.Do("GET", "/v2/"+bobRepo+"/blobs/"+layerD.String(), nil)
	mustNot("bob reads alice's blob through his repository", c, b, http.StatusNotFound)
	// An upload session is its opener's.
	_, hdr, _ = alice.Do("POST", "/v2/"+aliceRepo+"/blobs/uploads/", nil)
	c, _, b = bob.Do("PATCH", hdr.Get("Location"), []byte("bob's bytes"))
	mustNot("bob writes into alice's upload", c, b, http.StatusNotFound)
	c, _, b = bob.Do("PUT", "/v2/"+caretaker.AgentRepo+"/manifests/latest", []byte(`{}`), "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	mustNot("bob pushes cornus's own repository", c, b, http.StatusForbidden)
	_, _, b = bob.Do("GET", "/v2/_catalog?n=100000", nil)
	if strings.Contains(b, aliceRepo) {
		t.Errorf("bob's catalog lists alice's repository: %s", b)
	}
	if _, _, b := alice.Do("GET", "/v2/_catalog?n=100000", nil); !strings.Contains(b, aliceRepo) {
		t.Errorf("alice's catalog misses her repository: %s", b)
	}
	// Alice's image is still whole.
	if code, _, body := alice.Do("GET", "/v2/"+aliceRepo+"/manifests/1", nil); code != http.StatusOK || godigest.FromString(body) != manD {
		t.Fatalf("alice's manifest after bob's tries: %d", code)
	}

	// Her pushed name is hers on the other front ends too.
	p := sleeperProject(uniqueProject("regbob"))
	app := p.Services["app"]
	app.Image = aliceRepo + ":1"
	p.Services["app"] = app
	ts.refused(http.MethodPost, "/v1/projects/"+p.Name+"/up", ts.bob, map[string]any{"spec": p}, http.StatusForbidden, "another tenant's")
	ts.noContainers(p.Name)
	if code, body := ts.load(ts.bob, imageArchive(t, aliceRepo+":2", "bob")); code != http.StatusForbidden {
		t.Errorf("bob loads an image into alice's repository: %d %s", code, body)
	}

	if _, ok := ts.b.(registryStorer); !ok {
		return
	}
	// The backend's own store: what it has is served; what no tenant
	// owns (the operator's) is read-only to all.
	base, tag, _ := strings.Cut(testImage, ":")
	code, hdr, _ = bob.Do("GET", "/v2/"+base+"/manifests/"+tag, nil)
	if code != http.StatusOK || hdr.Get("Docker-Content-Digest") == "" {
		t.Fatalf("bob pulls the operator's %s: %d", testImage, code)
	}
	opDigest := hdr.Get("Docker-Content-Digest")
	c, _, b = bob.Do("PUT", "/v2/"+base+"/manifests/"+tag, []byte(`{"schemaVersion":2}`), "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	mustNot("bob pushes over the operator's image", c, b, http.StatusForbidden)
	c, _, b = bob.Do("DELETE", "/v2/"+base+"/manifests/"+opDigest, nil)
	mustNot("bob deletes the operator's image", c, b, http.StatusForbidden)
	c, _, b = bob.Do("POST", "/v2/"+base+"/blobs/uploads/", nil)
	mustNot("bob starts an upload to the operator's repository", c, b, http.StatusForbidden)
	if code, hdr, _ := alice.Do("GET", "/v2/"+base+"/manifests/"+tag, nil); code != http.StatusOK || hdr.Get("Docker-Content-Digest") != opDigest {
		t.Fatalf("the operator's image after bob's tries: %d %s, was %s", code, hdr.Get("Docker-Content-Digest"), opDigest)
	}
	if _, err := ts.b.(backends.Images).InspectImage(context.Background(), aliceRepo+":1"); err != nil {
		t.Fatalf("alice's push is not the backend's image: %v", err)
	}
	// Named on the registry's host, it is the backend's image already:
	// alice's up runs it by its local name, with no pull.
	host := strings.TrimPrefix(ts.http.URL, "http://")
	ts.srv.cfg.RegistryHost = host
	up := sleeperProject(uniqueProject("regnative"))
	app = up.Services["app"]
	app.Image = host + "/" + aliceRepo + ":1"
	up.Services["app"] = app
	got, err := ts.srv.admitUp(context.Background(), "alice", up, nil, nil)
	if err != nil || got.Services["app"].Image != aliceRepo+":1" {
		t.Fatalf("alice's up of %s: %v, runs %q", app.Image, err, got.Services["app"].Image)
	}
	if _, err := ts.srv.admitUp(context.Background(), "bob", up, nil, nil); !errdefs.IsPermissionDenied(err) {
		t.Fatalf("bob's up of %s: %v, want it refused", app.Image, err)
	}
}
