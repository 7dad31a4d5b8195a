package backendtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// registry is a read-only registry on 127.0.0.1 serving one image (a
// docker-archive's, its layer gzipped) as REPO:TAG under any name: the
// pull case's source, with nothing leaving the host.
type registry struct {
	srv      *http.Server
	host     string // 127.0.0.1:PORT
	manifest []byte
	blobs    map[string][]byte // digest → content
	fetched  atomic.Int32      // blob downloads
}

func serveRegistry(archive []byte) (*registry, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[h.Name] = b
	}
	var entries []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(files["manifest.json"], &entries); err != nil || len(entries) != 1 {
		return nil, errors.New("the archive holds no single image")
	}
	r := &registry{blobs: map[string][]byte{}}
	desc := func(mediaType string, b []byte) map[string]any {
		sum := sha256.Sum256(b)
		d := "sha256:" + hex.EncodeToString(sum[:])
		r.blobs[d] = b
		return map[string]any{"mediaType": mediaType, "size": len(b), "digest": d}
	}
	var layers []map[string]any
	for _, l := range entries[0].Layers {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		if _, err := zw.Write(files[l]); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		layers = append(layers, desc("application/vnd.docker.image.rootfs.diff.tar.gzip", gz.Bytes()))
	}
	m, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
		"config": desc("application/vnd.docker.container.image.v1+json", files[entries[0].Config]), "layers": layers,
	})
	if err != nil {
		return nil, err
	}
	r.manifest = m
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.host = ln.Addr().String()
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *registry) serve(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimPrefix(req.URL.Path, "/v2/")
	switch {
	case req.URL.Path == "/v2/" || req.URL.Path == "/v2":
		w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
		return
	case strings.Contains(path, "/manifests/"):
		sum := sha256.Sum256(r.manifest)
		w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
		w.Header().Set("Docker-Content-Digest", "sha256:"+hex.EncodeToString(sum[:]))
		http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(r.manifest))
	case strings.Contains(path, "/blobs/"):
		d := path[strings.LastIndex(path, "/")+1:]
		b, ok := r.blobs[d]
		if !ok {
			http.NotFound(w, req)
			return
		}
		if req.Method == http.MethodGet {
			r.fetched.Add(1)
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Docker-Content-Digest", d)
		http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(b))
	default:
		http.NotFound(w, req)
	}
}

func (r *registry) close() { _ = r.srv.Close() }
