package backendtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/backends"
	cornusregistry "github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// ForgetRepos removes, when the test ends, the images of repositories
// under prefix.
func ForgetRepos(t *testing.T, imgs backends.Images, prefix string) {
	t.Cleanup(func() {
		ctx := context.Background()
		list, err := imgs.ListImages(ctx)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, img := range list {
			for _, name := range img.Tags {
				if strings.HasPrefix(name, prefix) {
					if err := imgs.RemoveImage(ctx, name, true); err != nil {
						t.Errorf("cleanup: %v", err)
					}
				}
			}
		}
	})
}

// sameImage reports whether config digest d is image ID id (with or
// without "sha256:", as runtimes write it).
func sameImage(d digest.Digest, id string) bool {
	return strings.TrimPrefix(d.String(), "sha256:") == strings.TrimPrefix(id, "sha256:")
}

// RegistryStorer is a backend whose image store the server's registry
// serves (staging under dir).
type RegistryStorer interface {
	backends.Backend
	RegistryStore(dir string) (cornusregistry.Store, error)
}

// RegistryHostNative checks a registry store over b's own images
// (hostregistry's): an image b has is pulled with its config (the image
// ID) and layers byte for byte; pushed to another repository (its blobs
// mounted), it is at once an image b runs; a push to the tag moves it, a
// delete untags it.
func RegistryHostNative(t *testing.T, b RegistryStorer) { registryHost(t, b, false) }

// RegistryHostConverted is RegistryHostNative for a backend that keeps no
// layers (incus): an image it has is pulled as it converts it (a config
// and layers of the conversion, the same at each pull), and what is
// pushed is still an image it runs.
func RegistryHostConverted(t *testing.T, b RegistryStorer) { registryHost(t, b, true) }

func registryHost(t *testing.T, b RegistryStorer, converts bool) {
	imgs, err := backends.Want[backends.Images](b, backends.FeatureImages, "images")
	if err != nil {
		t.Fatal(err)
	}
	store, err := b.RegistryStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	LoadImage(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := cornusregistry.New(cornusregistry.Config{Store: store, Auth: registrytest.TokenAuth("s3cret"), UploadDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := registrytest.Client{T: t, Base: srv.URL, Token: "s3cret"}

	// Pull what the backend has.
	base, _, _ := strings.Cut(Image, ":")
	img, manifest, m := pullHostImage(ctx, t, c, imgs, converts)
	if converts {
		img.ID = m.Config.Digest.String() // the pushed image is the conversion
	}

	// Push it to a repository of the test's own: mounts and a manifest.
	repo := registrytest.UniqueRepo("cornus-t-push/app")
	ForgetRepos(t, imgs, "cornus-t-push/")
	for _, l := range append(m.Layers, struct{ Digest digest.Digest }{m.Config.Digest}) {
		if code, _, body := c.Do("POST", "/v2/"+repo+"/blobs/uploads/?mount="+l.Digest.String()+"&from="+base, nil); code != http.StatusCreated {
			t.Fatalf("mount %s: %d %s", l.Digest, code, body)
		}
	}
	if code, _, body := c.Do("PUT", "/v2/"+repo+"/manifests/1", []byte(manifest), "Content-Type", m.MediaType); code != http.StatusCreated {
		t.Fatalf("push manifest: %d %s", code, body)
	}
	pushed, err := imgs.InspectImage(ctx, repo+":1")
	if err != nil || !sameImage(digest.Digest(img.ID), pushed.ID) {
		t.Fatalf("the pushed image is not the backend's: %+v %v", pushed, err)
	}

	// It runs, without a load.
	RunsImage(ctx, t, b, repo+":1")

	// A push to the tag moves it (a new image with one more layer).
	_, manD := c.PushImage(repo, "1", registrytest.Layer(map[string]string{"moved": "yes"}))
	_, _, m2 := c.Do("GET", "/v2/"+repo+"/manifests/"+manD.String(), nil)
	var cfg struct {
		Config struct{ Digest digest.Digest }
	}
	if err := json.Unmarshal([]byte(m2), &cfg); err != nil {
		t.Fatal(err)
	}
	if moved, err := imgs.InspectImage(ctx, repo+":1"); err != nil || !sameImage(cfg.Config.Digest, moved.ID) {
		t.Fatalf("a second push to %s:1: the backend's image is %s (%v), want %s", repo, moved.ID, err, cfg.Config.Digest)
	}

	// Deleted through the registry, it is no longer the backend's.
	if code, _, body := c.Do("DELETE", "/v2/"+repo+"/manifests/1", nil); code != http.StatusAccepted {
		t.Fatalf("delete tag: %d %s", code, body)
	}
	if _, err := imgs.InspectImage(ctx, repo+":1"); err == nil {
		t.Fatal("a deleted tag is still the backend's image")
	}
}

// hostManifest is what RegistryHostNative reads of a manifest.
type hostManifest struct {
	MediaType string
	Config    struct{ Digest digest.Digest }
	Layers    []struct{ Digest digest.Digest }
}

// pullHostImage pulls the test image through c: its config is the
// backend's image, its blobs their digests, and a second pull gives the
// same manifest.
func pullHostImage(ctx context.Context, t *testing.T, c registrytest.Client, imgs backends.Images, converts bool) (backends.Image, string, hostManifest) {
	t.Helper()
	base, tag, _ := strings.Cut(Image, ":")
	img, err := imgs.InspectImage(ctx, Image)
	if err != nil {
		t.Fatal(err)
	}
	code, hdr, manifest := c.Do("GET", "/v2/"+base+"/manifests/"+tag, nil)
	var m hostManifest
	if code != http.StatusOK || json.Unmarshal([]byte(manifest), &m) != nil || !converts && !sameImage(m.Config.Digest, img.ID) || len(m.Layers) == 0 {
		t.Fatalf("pull %s: %d, config %s, the backend's image ID %s:\n%s", Image, code, m.Config.Digest, img.ID, manifest)
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

	return img, manifest, m
}
