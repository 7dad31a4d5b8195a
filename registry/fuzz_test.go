package registry

import (
	"archive/tar"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"
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

// FuzzImport: any manifest.json, index.json, config and layer in an
// archive give an import or an error (no panic), and what an import
// reports it stored can be read back by its tag.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`[{"Config":"c.json","RepoTags":["a:1"],"Layers":["l/layer.tar"]}]`), []byte(nil), []byte(`{"os":"linux"}`), []byte("layer"))
	f.Add([]byte(nil), []byte(`{"manifests":[{"digest":"sha256:3b6a07d0d404fab4e23b6d34bc6696a6a312dd92821332385e5af7c01c421351","annotations":{"io.containerd.image.name":"b:2"}}]}`),
		[]byte(`{"schemaVersion":2,"config":{"digest":"sha256:00"},"layers":[]}`), []byte(nil))
	f.Fuzz(func(t *testing.T, manifest, index, config, layer []byte) {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, e := range []struct {
			name string
			data []byte
		}{{"manifest.json", manifest}, {"index.json", index}, {"c.json", config}, {"l/layer.tar", layer},
			{"blobs/sha256/" + digest.FromBytes(config).Encoded(), config}, {"blobs/sha256/" + digest.FromBytes(layer).Encoded(), layer}} {
			if e.data == nil {
				continue
			}
			_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644, Size: int64(len(e.data))})
			_, _ = tw.Write(e.data)
		}
		_ = tw.Close()
		store, err := NewFSStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		got, err := Import(context.Background(), store, bytes.NewReader(b.Bytes()))
		if err != nil {
			return
		}
		for _, im := range got {
			if m, err := store.Manifest(context.Background(), im.Repo, im.Tag); err != nil || m.Digest != im.Digest {
				t.Fatalf("imported %+v, the store has %s (%v)", im, m.Digest, err)
			}
		}
	})
}
