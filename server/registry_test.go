package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	godigest "github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/caretaker"
)

// registryClient speaks /v2/ to the test server as one token (Basic, as
// docker login does).
type registryClient struct {
	t     *testing.T
	base  string
	token string
}

func (c registryClient) do(method, path string, body []byte, hdr ...string) (int, http.Header, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.SetBasicAuth("anyone", c.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

// pushImage pushes a one-layer image to repo:tag, failing the test on
// any refusal; it returns the layer's and the manifest's digests.
func (c registryClient) pushImage(repo, tag string, layer []byte) (godigest.Digest, godigest.Digest) {
	c.t.Helper()
	config := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	for _, b := range [][]byte{layer, config} {
		if code, _, body := c.do("POST", "/v2/"+repo+"/blobs/uploads/?digest="+godigest.FromBytes(b).String(), b); code != http.StatusCreated {
			c.t.Fatalf("push blob to %s: %d %s", repo, code, body)
		}
	}
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": godigest.FromBytes(config), "size": len(config)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": godigest.FromBytes(layer), "size": len(layer)}}})
	if code, _, body := c.do("PUT", "/v2/"+repo+"/manifests/"+tag, m, "Content-Type", "application/vnd.oci.image.manifest.v1+json"); code != http.StatusCreated {
		c.t.Fatalf("push manifest %s:%s: %d %s", repo, tag, code, body)
	}
	return godigest.FromBytes(layer), godigest.FromBytes(m)
}

// TestRegistryTenants: the registry on /v2/ needs a client token
// (Basic, or the Bearer its token endpoint hands back); a repository is
// its first pusher's, and to another tenant it does not exist: every
// route, tried as bob against alice's repository, reads, writes and
// lists nothing of it.
func TestRegistryTenants(t *testing.T) {
	ts := newTestServer(t)
	alice := registryClient{t, ts.http.URL, ts.alice}
	bob := registryClient{t, ts.http.URL, ts.bob}
	anon := registryClient{t, ts.http.URL, ""}

	code, hdr, _ := anon.do("GET", "/v2/", nil)
	if code != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), `Bearer realm="`+ts.http.URL+`/v2/token"`) {
		t.Fatalf("anonymous /v2/: %d %q, want 401 with the token challenge", code, hdr.Get("WWW-Authenticate"))
	}
	if code, _, _ := (registryClient{t, ts.http.URL, "not-a-token"}).do("GET", "/v2/", nil); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	ct, err := ts.srv.tokens.mintCaretaker(grant{Tenant: "alice", Project: "p", Epoch: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := (registryClient{t, ts.http.URL, ct}).do("GET", "/v2/", nil); code != http.StatusUnauthorized {
		t.Fatalf("a caretaker token: %d, want 401", code)
	}
	// The token flow Docker and containerd follow.
	code, _, body := alice.do("GET", "/v2/token?service=cornus&scope=repository:alice/app:pull,push", nil)
	var tok struct{ Token string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &tok) != nil || tok.Token == "" {
		t.Fatalf("token endpoint: %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", ts.http.URL+"/v2/", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/v2/ with the handed-back Bearer token: %v %v", resp, err)
	}

	layer := []byte("alice's secret layer")
	layerD, manD := alice.pushImage("alice/app", "1", layer)
	if code, _, body := alice.do("GET", "/v2/alice/app/blobs/"+layerD.String(), nil); code != http.StatusOK || body != string(layer) {
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
	c, _, b := bob.do("GET", "/v2/alice/app/manifests/1", nil)
	mustNot("bob gets alice's manifest by tag", c, b, http.StatusNotFound)
	c, _, b = bob.do("GET", "/v2/alice/app/manifests/"+manD.String(), nil)
	mustNot("bob gets alice's manifest by digest", c, b, http.StatusNotFound)
	c, _, b = bob.do("GET", "/v2/alice/app/blobs/"+layerD.String(), nil)
	mustNot("bob gets alice's blob", c, b, http.StatusNotFound)
	c, _, b = bob.do("HEAD", "/v2/alice/app/blobs/"+layerD.String(), nil)
	mustNot("bob heads alice's blob", c, b, http.StatusNotFound)
	c, _, b = bob.do("GET", "/v2/alice/app/tags/list", nil)
	mustNot("bob lists alice's tags", c, b, http.StatusNotFound)
	c, _, b = bob.do("GET", "/v2/alice/app/referrers/"+manD.String(), nil)
	mustNot("bob lists alice's referrers", c, b, http.StatusNotFound)
	c, _, b = bob.do("POST", "/v2/alice/app/blobs/uploads/", nil)
	mustNot("bob starts an upload to alice's repository", c, b, http.StatusNotFound)
	c, _, b = bob.do("PUT", "/v2/alice/app/manifests/1", []byte(`{"schemaVersion":2}`), "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	mustNot("bob overwrites alice's tag", c, b, http.StatusNotFound)
	c, _, b = bob.do("DELETE", "/v2/alice/app/manifests/"+manD.String(), nil)
	mustNot("bob deletes alice's manifest", c, b, http.StatusNotFound)
	c, _, b = bob.do("DELETE", "/v2/alice/app/blobs/"+layerD.String(), nil)
	mustNot("bob deletes alice's blob", c, b, http.StatusNotFound)
	// A mount from alice's repository is not made (an upload starts
	// instead, as the spec says) and her blob stays out of bob's.
	c, _, b = bob.do("POST", "/v2/bob/x/blobs/uploads/?mount="+layerD.String()+"&from=alice/app", nil)
	mustNot("bob mounts alice's blob", c, b, http.StatusAccepted)
	c, _, b = bob.do("GET", "/v2/bob/x/blobs/"+layerD.String(), nil)
	mustNot("bob reads alice's blob through his repository", c, b, http.StatusNotFound)
	// An upload session is its opener's.
	_, hdr, _ = alice.do("POST", "/v2/alice/app/blobs/uploads/", nil)
	c, _, b = bob.do("PATCH", hdr.Get("Location"), []byte("bob's bytes"))
	mustNot("bob writes into alice's upload", c, b, http.StatusNotFound)
	c, _, b = bob.do("PUT", "/v2/"+caretaker.AgentRepo+"/manifests/latest", []byte(`{}`), "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	mustNot("bob pushes cornus's own repository", c, b, http.StatusForbidden)
	_, _, b = bob.do("GET", "/v2/_catalog", nil)
	if strings.Contains(b, "alice/app") {
		t.Errorf("bob's catalog lists alice's repository: %s", b)
	}
	if _, _, b := alice.do("GET", "/v2/_catalog", nil); !strings.Contains(b, "alice/app") {
		t.Errorf("alice's catalog misses her repository: %s", b)
	}
	// Alice's image is still whole.
	if code, _, body := alice.do("GET", "/v2/alice/app/manifests/1", nil); code != http.StatusOK || godigest.FromString(body) != manD {
		t.Fatalf("alice's manifest after bob's tries: %d", code)
	}
}
