package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
)

type testRegistry struct {
	t   *testing.T
	dir string
	h   *Handler
	srv *httptest.Server
}

func newTestRegistry(t *testing.T, dir string, cfg Config) *testRegistry {
	t.Helper()
	store, err := NewFSStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.UploadDir = store, filepath.Join(dir, "uploads")
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testRegistry{t: t, dir: dir, h: h, srv: srv}
}

func (r *testRegistry) do(method, path string, body []byte, hdr ...string) (int, http.Header, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

// stored reports whether the store holds d at all (in any repository).
func (r *testRegistry) stored(d digest.Digest) bool {
	_, err := os.Stat(filepath.Join(r.dir, "store", "blobs", string(d.Algorithm()), d.Encoded()))
	return err == nil
}

// TestUploadChecks: an upload whose bytes are not its digest, or that
// passes the blob bound or its principal's quota, commits nothing and
// leaves no session behind.
func TestUploadChecks(t *testing.T) {
	r := newTestRegistry(t, t.TempDir(), Config{MaxBlob: 1000, UploadQuota: 1500})
	body := []byte("the bytes")
	wrong := digest.FromString("other bytes")
	if code, _, _ := r.do("POST", "/v2/a/blobs/uploads/?digest="+wrong.String(), body); code != http.StatusBadRequest {
		t.Errorf("monolithic upload under another digest: %d, want 400", code)
	}
	if r.stored(wrong) || r.stored(digest.FromBytes(body)) {
		t.Error("a refused upload left a blob in the store")
	}
	big := bytes.Repeat([]byte("x"), 1001)
	if code, _, _ := r.do("POST", "/v2/a/blobs/uploads/?digest="+digest.FromBytes(big).String(), big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a blob past MaxBlob: %d, want 413", code)
	}
	// Two sessions of 800 bytes each pass the quota of 1500 together.
	_, h1, _ := r.do("POST", "/v2/a/blobs/uploads/", nil)
	if code, _, _ := r.do("PATCH", h1.Get("Location"), bytes.Repeat([]byte("a"), 800)); code != http.StatusAccepted {
		t.Fatalf("first chunk: %d", code)
	}
	_, h2, _ := r.do("POST", "/v2/a/blobs/uploads/", nil)
	if code, _, _ := r.do("PATCH", h2.Get("Location"), bytes.Repeat([]byte("b"), 800)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunk past the principal's quota: %d, want 413", code)
	}
	if n := len(r.h.uploads.sessions); n != 1 {
		t.Errorf("%d sessions left, want 1 (the first, still open)", n)
	}
	if code, _, _ := r.do("PUT", h1.Get("Location")+"?digest="+wrong.String(), nil); code != http.StatusBadRequest {
		t.Errorf("finishing under a wrong digest: %d, want 400", code)
	}
	if r.stored(wrong) {
		t.Error("a wrong digest reached the store")
	}
}

// TestManifestNeedsItsBlobs: a manifest naming a blob the repository
// lacks is refused, even when another repository holds it.
func TestManifestNeedsItsBlobs(t *testing.T) {
	r := newTestRegistry(t, t.TempDir(), Config{})
	layer := []byte("layer")
	if code, _, _ := r.do("POST", "/v2/other/blobs/uploads/?digest="+digest.FromBytes(layer).String(), layer); code != http.StatusCreated {
		t.Fatalf("push layer: %d", code)
	}
	m := fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":5},"layers":[]}`, digest.FromBytes(layer))
	code, _, body := r.do("PUT", "/v2/mine/manifests/1", []byte(m), "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	if code != http.StatusBadRequest || !bytes.Contains([]byte(body), []byte(codeManifestBlobUnknown)) {
		t.Fatalf("manifest with a blob of another repository: %d %s, want 400 %s", code, body, codeManifestBlobUnknown)
	}
}

// TestAbandonedUploads: an upload untouched for the TTL is dropped, and
// a registry started over the directories of one killed mid-push keeps
// none of its sessions (nothing of them is visible).
func TestAbandonedUploads(t *testing.T) {
	dir := t.TempDir()
	r := newTestRegistry(t, dir, Config{UploadTTL: 50 * time.Millisecond})
	_, h, _ := r.do("POST", "/v2/a/blobs/uploads/", nil)
	r.do("PATCH", h.Get("Location"), []byte("half a blob"))
	time.Sleep(100 * time.Millisecond)
	r.do("POST", "/v2/a/blobs/uploads/", nil) // a new upload sweeps
	if code, _, _ := r.do("GET", h.Get("Location"), nil); code != http.StatusNotFound {
		t.Errorf("an upload past its TTL: %d, want 404", code)
	}
	_, h, _ = r.do("POST", "/v2/a/blobs/uploads/", nil)
	r.do("PATCH", h.Get("Location"), []byte("half a blob"))
	again := newTestRegistry(t, dir, Config{})
	if code, _, _ := again.do("GET", h.Get("Location"), nil); code != http.StatusNotFound {
		t.Errorf("an upload of the previous run: %d, want 404", code)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "uploads")); len(ents) != 0 {
		t.Errorf("%d upload files of the previous run left", len(ents))
	}
}

// TestConcurrentPushesOfOneBlob: pushes of the same blob at once all
// succeed and leave one whole blob.
func TestConcurrentPushesOfOneBlob(t *testing.T) {
	r := newTestRegistry(t, t.TempDir(), Config{})
	blob := bytes.Repeat([]byte("0123456789"), 100_000)
	d := digest.FromBytes(blob)
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			codes[i], _, _ = r.do("POST", fmt.Sprintf("/v2/r%d/blobs/uploads/?digest=%s", i%2, d), blob)
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusCreated {
			t.Errorf("push %d: %d", i, c)
		}
	}
	for _, repo := range []string{"r0", "r1"} {
		if code, _, body := r.do("GET", "/v2/"+repo+"/blobs/"+d.String(), nil); code != http.StatusOK || digest.FromString(body) != d {
			t.Errorf("%s: %d, or not the blob pushed", repo, code)
		}
	}
}

// Authenticated hears who each authenticated request is (the server's
// request log names the tenant), and nothing of one refused.
func TestAuthenticatedHook(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	r := newTestRegistry(t, t.TempDir(), Config{Auth: tokenAuth("s3cret"), Authenticated: func(_ *http.Request, p string) {
		mu.Lock()
		heard = append(heard, p)
		mu.Unlock()
	}})
	if code, _, _ := r.do("GET", "/v2/", nil, "Authorization", "Bearer s3cret"); code != http.StatusOK {
		t.Fatalf("GET /v2/ with the token: %d", code)
	}
	if code, _, _ := r.do("GET", "/v2/", nil, "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
		t.Fatalf("GET /v2/ with a wrong token: %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 1 || heard[0] != "t" {
		t.Fatalf("heard %q, want the one authenticated request's principal", heard)
	}
}

// tokenAuth lets one token do anything, as principal "t".
type tokenAuth string

func (a tokenAuth) Authenticate(s string) (string, bool)                  { return "t", s == string(a) }
func (tokenAuth) Authorize(context.Context, string, string, Action) error { return nil }
func (tokenAuth) Visible(context.Context, string, string) bool            { return true }
