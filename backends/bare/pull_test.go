package bare

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/internal/testimage"
)

// A pull from a registry on loopback speaks plain HTTP with no setting
// and leaves the image inspectable and runnable; nothing leaves the host
// (issue 14: images). The registry is a minimal read-only one in the test
// serving a locally built image.
func TestPullFromLoopbackRegistry(t *testing.T) {
	b := newTestBackend(t)
	ctx := context.Background()
	var tar bytes.Buffer
	if err := testimage.BuildBusybox(&tar, testimage.Options{Ref: "cornus-test/pull-src:1"}); err != nil {
		t.Fatal(err)
	}
	src, err := openImageStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.importTar(ctx, &tar); err != nil {
		t.Fatal(err)
	}
	r, err := src.get(ctx, "cornus-test/pull-src:1")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := content.ReadBlob(ctx, src.content, r.name.Target)
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[digest.Digest]bool{r.manifest.Config.Digest: true}
	for _, l := range r.manifest.Layers {
		blobs[l.Digest] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, req *http.Request) {
		path := strings.TrimPrefix(req.URL.Path, "/v2/")
		switch {
		case path == "":
			w.WriteHeader(http.StatusOK)
		case strings.HasPrefix(path, "cornus-test/pulled/manifests/"):
			w.Header().Set("Content-Type", r.name.Target.MediaType)
			w.Header().Set("Docker-Content-Digest", r.name.Target.Digest.String())
			_, _ = w.Write(manifest) // a failed write fails the pull
		case strings.HasPrefix(path, "cornus-test/pulled/blobs/"):
			d := digest.Digest(strings.TrimPrefix(path, "cornus-test/pulled/blobs/"))
			data, err := content.ReadBlob(ctx, src.content, ocispec.Descriptor{Digest: d})
			if !blobs[d] || err != nil {
				http.NotFound(w, req)
				return
			}
			w.Header().Set("Docker-Content-Digest", d.String())
			_, _ = w.Write(data) // a failed write fails the pull
		default:
			http.NotFound(w, req)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }() // ErrServerClosed at cleanup
	t.Cleanup(func() { srv.Close() })

	ref := l.Addr().String() + "/cornus-test/pulled:1"
	if err := b.PullImage(ctx, ref, nil); err != nil {
		t.Fatal(err)
	}
	img, err := b.InspectImage(ctx, ref)
	if err != nil || img.ID != r.configID.String() {
		t.Fatalf("inspect after pull: %+v %v (want ID %s)", img, err, r.configID)
	}
	if err := b.RemoveImage(ctx, ref, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.InspectImage(ctx, ref); err == nil {
		t.Fatal("the removed image is still there")
	}
}
