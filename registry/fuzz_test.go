package registry

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

// FuzzRequests: any method, path, query, headers and body give an answer
// (no panic) and never a server error over a healthy store; nothing is
// written outside the registry's directories.
func FuzzRequests(f *testing.F) {
	f.Add("POST", "/v2/a/b/blobs/uploads/?digest=sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "", []byte("foo"))
	f.Add("PUT", "/v2/a/manifests/1", "application/vnd.oci.image.index.v1+json", []byte(`{"schemaVersion":2,"manifests":[{"digest":"sha256:00"}]}`))
	f.Add("GET", "/v2/a/tags/list?n=1&last=z", "", []byte(nil))
	f.Add("PATCH", "/v2/a/blobs/uploads/x", "", []byte("x"))
	f.Add("GET", "/v2/_catalog?n=-1", "", []byte(nil))
	f.Add("GET", "/v2/a/referrers/sha512:"+string(bytes.Repeat([]byte("0"), 128))+"?artifactType=x", "", []byte(nil))
	dir := f.TempDir()
	store, err := NewFSStore(filepath.Join(dir, "store"))
	if err != nil {
		f.Fatal(err)
	}
	h, err := New(Config{Store: store, UploadDir: filepath.Join(dir, "uploads"), MaxBlob: 1 << 20, MaxManifest: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method, target, contentType string, body []byte) {
		req, err := http.NewRequest(method, "http://r"+target, bytes.NewReader(body))
		if err != nil || req.URL.Path == "" {
			return
		}
		req.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
	})
}
