package dockerhost

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// forgetRepos removes, when the test ends, dockerd's images of the
// repositories under prefix.
func forgetRepos(t *testing.T, b *Backend, prefix string) {
	t.Cleanup(func() {
		ctx := context.Background()
		res, err := b.cli.ImageList(ctx, client.ImageListOptions{})
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, img := range res.Items {
			for _, name := range img.RepoTags {
				if strings.HasPrefix(name, prefix) {
					if _, err := b.cli.ImageRemove(ctx, name, client.ImageRemoveOptions{Force: true}); err != nil {
						t.Errorf("cleanup: %v", err)
					}
				}
			}
		}
	})
}

func testStore(t *testing.T, b *Backend) registry.Store {
	s, err := b.RegistryStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The OCI conformance test passes against dockerd's images: what dockerd
// cannot load (its manifests are artifacts and random bytes) is served
// from the stage.
func TestRegistryStoreConformance(t *testing.T) {
	b := newTestBackend(t)
	prefix := registrytest.UniqueRepo("cornus-t-conformance")
	forgetRepos(t, b, prefix)
	registrytest.Conformance(t, testStore(t, b), prefix)
}

// Host-native re-export: an image dockerd has is pulled with its config
// (the image ID) and layers byte for byte; pushed to another repository
// (its blobs mounted), it is at once an image dockerd runs; a push to the
// tag moves it, a delete untags it.
func TestRegistryStoreHostNative(t *testing.T) {
	b := newTestBackend(t)
	backendtest.LoadImage(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := registry.New(registry.Config{Store: testStore(t, b), Auth: registrytest.TokenAuth("s3cret"), UploadDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := registrytest.Client{T: t, Base: srv.URL, Token: "s3cret"}

	// Pull what dockerd has.
	base, tag, _ := strings.Cut(backendtest.Image, ":")
	img, err := b.InspectImage(ctx, backendtest.Image)
	if err != nil {
		t.Fatal(err)
	}
	code, hdr, manifest := c.Do("GET", "/v2/"+base+"/manifests/"+tag, nil)
	var m struct {
		MediaType string
		Config    struct{ Digest digest.Digest }
		Layers    []struct{ Digest digest.Digest }
	}
	if code != http.StatusOK || json.Unmarshal([]byte(manifest), &m) != nil || m.Config.Digest.String() != img.ID || len(m.Layers) == 0 {
		t.Fatalf("pull %s: %d, config %s, dockerd's image ID %s:\n%s", backendtest.Image, code, m.Config.Digest, img.ID, manifest)
	}
	for _, d := range append([]digest.Digest{m.Config.Digest}, func() (ds []digest.Digest) {
		for _, l := range m.Layers {
			ds = append(ds, l.Digest)
		}
		return ds
	}()...) {
		code, _, body := c.Do("GET", "/v2/"+base+"/blobs/"+d.String(), nil)
		if code != http.StatusOK || digest.FromString(body) != d {
			t.Fatalf("pull blob %s: %d, digest %s", d, code, digest.FromString(body))
		}
	}
	if _, again, _ := c.Do("GET", "/v2/"+base+"/manifests/"+tag, nil); again.Get("Docker-Content-Digest") != hdr.Get("Docker-Content-Digest") {
		t.Fatalf("a second pull gave manifest %s, the first %s", again.Get("Docker-Content-Digest"), hdr.Get("Docker-Content-Digest"))
	}

	// Push it to a repository of the test's own: mounts and a manifest.
	repo := registrytest.UniqueRepo("cornus-t-push/app")
	forgetRepos(t, b, "cornus-t-push/")
	for _, l := range append(m.Layers, struct{ Digest digest.Digest }{m.Config.Digest}) {
		if code, _, body := c.Do("POST", "/v2/"+repo+"/blobs/uploads/?mount="+l.Digest.String()+"&from="+base, nil); code != http.StatusCreated {
			t.Fatalf("mount %s: %d %s", l.Digest, code, body)
		}
	}
	if code, _, body := c.Do("PUT", "/v2/"+repo+"/manifests/1", []byte(manifest), "Content-Type", m.MediaType); code != http.StatusCreated {
		t.Fatalf("push manifest: %d %s", code, body)
	}
	pushed, err := b.InspectImage(ctx, repo+":1")
	if err != nil || pushed.ID != img.ID {
		t.Fatalf("the pushed image is not dockerd's: %+v %v", pushed, err)
	}

	// It runs, without a load.
	backendtest.RunsImage(ctx, t, b, repo+":1")

	// A push to the tag moves it (a new image with one more layer).
	_, manD := c.PushImage(repo, "1", registrytest.Layer(map[string]string{"moved": "yes"}))
	_, _, m2 := c.Do("GET", "/v2/"+repo+"/manifests/"+manD.String(), nil)
	var cfg struct {
		Config struct{ Digest digest.Digest }
	}
	if err := json.Unmarshal([]byte(m2), &cfg); err != nil {
		t.Fatal(err)
	}
	if moved, err := b.InspectImage(ctx, repo+":1"); err != nil || moved.ID != cfg.Config.Digest.String() {
		t.Fatalf("a second push to %s:1: dockerd's image is %s (%v), want %s", repo, moved.ID, err, cfg.Config.Digest)
	}

	// Deleted through the registry, it is no longer dockerd's.
	if code, _, body := c.Do("DELETE", "/v2/"+repo+"/manifests/1", nil); code != http.StatusAccepted {
		t.Fatalf("delete tag: %d %s", code, body)
	}
	if _, err := b.InspectImage(ctx, repo+":1"); err == nil {
		t.Fatal("a deleted tag is still dockerd's image")
	}
}
