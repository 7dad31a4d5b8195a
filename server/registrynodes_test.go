package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/dockerarchive"
	"github.com/cornus-dev/cornus/registry/registrytest"
	"github.com/cornus-dev/cornus/spec"
)

// pullingBackend is the test environment's backend posing as one whose
// nodes pull every image (the kubernetes backend's way), for the
// server's half of it; e2e's TestRegistryNodesPull runs it on the real
// cluster.
type pullingBackend struct {
	backends.Backend
	backends.Images // what the nodes have (the kubernetes backend's probe)
}

func (pullingBackend) PullsFromRegistry() {}

// TestRegistryNodesPull: where the nodes pull, a tenant's load goes into
// the server's registry, and its up runs the image from there by digest,
// with a pull credential that pulls and nothing else, only the tenant's
// repositories, only while the tenant has a token. Bob reaches none of
// alice's images by any name: not by a load, an up, or his own pull
// credential; nor does a credential forged from alice's.
func TestRegistryNodesPull(t *testing.T) {
	ts := newTestServerOver(t, func(b backends.Backend) backends.Backend { return pullingBackend{b, b.(backends.Images)} })
	ctx := context.Background()
	host := strings.TrimPrefix(ts.http.URL, "http://")
	ts.srv.cfg.RegistryHost = host
	repo := uniqueProject("alice-app-")
	alice := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.alice}
	t.Cleanup(func() { alice.DeleteRepo(repo) })

	var arc bytes.Buffer
	if err := dockerarchive.Write(&arc, dockerarchive.Image{Ref: repo + ":1", Cmd: []string{"true"}}, []byte{}); err != nil {
		t.Fatal(err)
	}
	refs, err := ts.clientOf(ts.alice).LoadImage(ctx, bytes.NewReader(arc.Bytes()))
	if err != nil || len(refs) != 1 || refs[0] != repo+":1" {
		t.Fatalf("alice's load: %v %v", refs, err)
	}
	// What the nodes have is the operator's: not loaded over, not even
	// with the very same image (the kubelet would then take it for one
	// pulled with a credential).
	if _, err := ts.clientOf(ts.alice).LoadImage(ctx, bytes.NewReader(imageArchive(t, testImage, ""))); err == nil || !strings.Contains(err.Error(), "on the cluster's nodes already") {
		t.Errorf("alice's load of %s, which the nodes have: %v", testImage, err)
	}
	code, hdr, body := alice.Do("GET", "/v2/"+repo+"/manifests/1", nil)
	if code != http.StatusOK {
		t.Fatalf("the load is not in the registry: %d %s", code, body)
	}
	digest := hdr.Get("Docker-Content-Digest")

	// Her up runs it by digest, with her pull credential, whether the
	// spec names it as loaded or on the registry's host.
	var auth *spec.RegistryAuth
	for _, image := range []string{repo + ":1", host + "/" + repo + ":1", host + "/" + repo + "@" + digest} {
		p := sleeperProject(uniqueProject("nodes"))
		app := p.Services["app"]
		app.Image = image
		p.Services["app"] = app
		got, err := ts.srv.admitUp(ctx, "alice", p, nil, nil)
		if err != nil {
			t.Fatalf("alice's up of %s: %v", image, err)
		}
		a := got.Services["app"]
		if a.Image != host+"/"+repo+"@"+digest || a.PullAuth == nil || a.PullAuth.Server != host || a.PullAuth.Username != pullUsername {
			t.Fatalf("alice's up of %s runs %s with %+v", image, a.Image, a.PullAuth)
		}
		if p.Services["app"].Image != image {
			t.Fatal("the rewrite changed the caller's spec")
		}
		auth = a.PullAuth
	}
	// An image the registry does not hold is the nodes' to pull; one named
	// on the registry's host that it lacks is an error naming it.
	p := sleeperProject(uniqueProject("nodes"))
	got, err := ts.srv.admitUp(ctx, "alice", p, nil, nil)
	if err != nil || got.Services["app"].Image != testImage || got.Services["app"].PullAuth != nil {
		t.Fatalf("an image the registry lacks: %v %+v", err, got.Services["app"])
	}
	app := p.Services["app"]
	app.Image = host + "/" + repo + ":2"
	p.Services["app"] = app
	if _, err := ts.srv.admitUp(ctx, "alice", p, nil, nil); !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), "services.app.image") {
		t.Fatalf("an image on the registry's host it lacks: %v", err)
	}

	// The credential pulls her image, Basic or through the token flow...
	node := registrytest.Client{T: t, Base: ts.http.URL, Token: auth.Password}
	for _, path := range []string{"/v2/" + repo + "/manifests/" + digest, "/v2/token?service=cornus&scope=repository:" + repo + ":pull"} {
		if code, _, body := node.Do("GET", path, nil); code != http.StatusOK {
			t.Fatalf("the pull credential: GET %s: %d %s", path, code, body)
		}
	}
	// ... and writes nothing.
	for _, req := range [][2]string{{"POST", "/v2/" + repo + "/blobs/uploads/"}, {"DELETE", "/v2/" + repo + "/manifests/" + digest}, {"POST", "/v2/" + uniqueProject("new-") + "/blobs/uploads/"}} {
		if code, _, body := node.Do(req[0], req[1], nil); code != http.StatusForbidden {
			t.Errorf("the pull credential: %s %s: %d %s, want 403", req[0], req[1], code, body)
		}
	}

	// Bob: by his own credential, by a name in an up, by a load.
	bobNode := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.srv.pullToken("bob")}
	if code, _, _ := bobNode.Do("GET", "/v2/"+repo+"/manifests/"+digest, nil); code != http.StatusNotFound {
		t.Errorf("bob's pull credential on alice's image: %d, want 404", code)
	}
	for _, image := range []string{repo + ":1", host + "/" + repo + ":1", host + "/" + repo + "@" + digest} {
		p := sleeperProject(uniqueProject("nodes"))
		app := p.Services["app"]
		app.Image = image
		p.Services["app"] = app
		if _, err := ts.srv.admitUp(ctx, "bob", p, nil, nil); !errdefs.IsPermissionDenied(err) {
			t.Errorf("bob's up of %s: %v, want it refused", image, err)
		}
	}
	if _, err := ts.clientOf(ts.bob).LoadImage(ctx, bytes.NewReader(arc.Bytes())); err == nil || !strings.Contains(err.Error(), "another name") {
		t.Errorf("bob's load over alice's image: %v", err)
	}
	// A credential made from alice's under bob's name is no credential.
	_, mac, _ := strings.Cut(strings.TrimPrefix(auth.Password, pullTokenPrefix), ".")
	forged := registrytest.Client{T: t, Base: ts.http.URL, Token: pullTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte("bob")) + "." + mac}
	if code, _, _ := forged.Do("GET", "/v2/", nil); code != http.StatusUnauthorized {
		t.Errorf("a forged pull credential: %d, want 401", code)
	}
	// Revoked, alice's credential stops; with a new token, it works
	// again (and cleanup deletes her repository with it).
	if err := RevokeClientToken(ts.tokensFile, "alice"); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := node.Do("GET", "/v2/"+repo+"/manifests/"+digest, nil); code != http.StatusUnauthorized {
		t.Errorf("alice's pull credential after her revocation: %d, want 401", code)
	}
	tok, err := AddClientToken(ts.tokensFile, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := node.Do("GET", "/v2/"+repo+"/manifests/"+digest, nil); code != http.StatusOK {
		t.Errorf("alice's pull credential with a new token: %d, want 200", code)
	}
	alice.Token = tok // for the cleanup
}
