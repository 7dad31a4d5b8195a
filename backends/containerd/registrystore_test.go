package containerd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// forgetRepos removes, when the test ends, the images of repositories
// under prefix and the registry labels naming them, so that containerd's
// GC frees what was pushed.
func forgetRepos(t *testing.T, b *Backend, prefix string) {
	t.Cleanup(func() {
		ctx := b.ns(context.Background())
		imgs, err := b.cli.ImageService().List(ctx)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, img := range imgs {
			if repo, _, ok := repoTag(img.Name); ok && strings.HasPrefix(repo, prefix) {
				if err := b.cli.ImageService().Delete(ctx, img.Name); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}
		}
		s := registryStore{b}
		err = b.cli.ContentStore().Walk(ctx, func(info content.Info) error {
			for k := range info.Labels {
				for _, p := range []string{labelBlobIn, labelManifestIn} {
					if repo, ok := strings.CutPrefix(k, p); ok && strings.HasPrefix(repo, prefix) {
						if err := s.unlink(ctx, info.Digest, p, repo); err != nil {
							t.Errorf("cleanup: %v", err)
						}
					}
				}
			}
			return nil
		}, labelFilter(labelGCRoot))
		if err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// The OCI conformance test passes against containerd's own store, but
// for sha512 content, which containerd cannot verify (refused, 400
// UNSUPPORTED: TestRegistryStoreRefusesSHA512).
func TestRegistryStoreConformance(t *testing.T) {
	b := newTestBackend(t)
	prefix := registrytest.UniqueRepo("cornus-t-conformance")
	forgetRepos(t, b, prefix)
	registrytest.Conformance(t, registryStore{b}, prefix, "OCI_DATA_SHA512=false")
}

// storeClient is a client of a registry over b's store, served until the
// test ends.
func storeClient(t *testing.T, b *Backend) registrytest.Client {
	h, err := registry.New(registry.Config{Store: registryStore{b}, Auth: registrytest.TokenAuth("s3cret"), UploadDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return registrytest.Client{T: t, Base: srv.URL, Token: "s3cret"}
}

func TestRegistryStoreRefusesSHA512(t *testing.T) {
	b := newTestBackend(t)
	c := storeClient(t, b)
	repo := registrytest.UniqueRepo("cornus-t-sha512/r")
	forgetRepos(t, b, "cornus-t-sha512/")
	blob := []byte("sha512 content")
	code, _, body := c.Do("POST", "/v2/"+repo+"/blobs/uploads/?digest="+digest.SHA512.FromBytes(blob).String(), blob)
	if code != http.StatusBadRequest || !strings.Contains(body, "UNSUPPORTED") || !strings.Contains(body, "sha256 digests only") {
		t.Fatalf("a sha512 blob: %d %s, want 400 UNSUPPORTED saying why", code, body)
	}
}

// Host-native re-export: an image the backend has is pulled byte for
// byte (the manifest digest is the one containerd runs); an image pushed
// from it to another repository (its blobs mounted, nothing copied) is at
// once an image the backend runs.
func TestRegistryStoreHostNative(t *testing.T) {
	b := newTestBackend(t)
	backendtest.LoadImage(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := storeClient(t, b)

	// Pull what the backend has.
	base, tag, _ := strings.Cut(backendtest.Image, ":")
	img, err := b.cli.ImageService().Get(b.ns(ctx), "docker.io/"+backendtest.Image)
	if err != nil {
		t.Fatal(err)
	}
	code, hdr, manifest := c.Do("GET", "/v2/"+base+"/manifests/"+tag, nil, "Accept", img.Target.MediaType)
	if code != http.StatusOK || digest.Digest(hdr.Get("Docker-Content-Digest")) != img.Target.Digest || digest.FromString(manifest) != img.Target.Digest {
		t.Fatalf("pull %s: %d, digest %s (body %s), containerd runs %s", backendtest.Image, code, hdr.Get("Docker-Content-Digest"), digest.FromString(manifest), img.Target.Digest)
	}
	children, err := images.Children(b.ns(ctx), b.cli.ContentStore(), img.Target)
	if err != nil || len(children) < 2 {
		t.Fatalf("the image's children: %v %v", children, err)
	}
	for _, ch := range children {
		code, _, body := c.Do("GET", "/v2/"+base+"/blobs/"+ch.Digest.String(), nil)
		if code != http.StatusOK || digest.FromString(body) != ch.Digest {
			t.Fatalf("pull blob %s: %d, digest %s", ch.Digest, code, digest.FromString(body))
		}
	}

	// Push it to a repository of the test's own: mounts and a manifest.
	repo := registrytest.UniqueRepo("cornus-t-push/app")
	forgetRepos(t, b, "cornus-t-push/")
	for _, ch := range children {
		if code, _, body := c.Do("POST", "/v2/"+repo+"/blobs/uploads/?mount="+ch.Digest.String()+"&from="+base, nil); code != http.StatusCreated {
			t.Fatalf("mount %s: %d %s", ch.Digest, code, body)
		}
	}
	if code, _, body := c.Do("PUT", "/v2/"+repo+"/manifests/1", []byte(manifest), "Content-Type", img.Target.MediaType); code != http.StatusCreated {
		t.Fatalf("push manifest: %d %s", code, body)
	}
	if _, err := b.InspectImage(ctx, repo+":1"); err != nil {
		t.Fatalf("the pushed image is not the backend's: %v", err)
	}

	// It runs, without a load.
	backendtest.RunsImage(ctx, t, b, repo+":1")

	// A push to the tag moves it.
	_, moved := c.PushImage(repo, "1", []byte("another layer"))
	if img, err := b.cli.ImageService().Get(b.ns(ctx), "docker.io/"+repo+":1"); err != nil || img.Target.Digest != moved {
		t.Fatalf("a second push to %s:1: the image is %v (%v), want %s", repo, img.Target.Digest, err, moved)
	}

	// Deleted through the registry, it is no longer the backend's.
	if code, _, body := c.Do("DELETE", "/v2/"+repo+"/manifests/1", nil); code != http.StatusAccepted {
		t.Fatalf("delete tag: %d %s", code, body)
	}
	if _, err := b.InspectImage(ctx, repo+":1"); err == nil {
		t.Fatal("a deleted tag is still an image")
	}
}

// A verified upload beside containerd's content store becomes the blob by
// a link, with no copy through containerd's API: the blob is the upload's
// very file, recorded in the namespace, readable and labelled as pushed.
func TestRegistryStorePlacesUploads(t *testing.T) {
	b := newTestBackend(t)
	s := registryStore{b}
	ctx := context.Background()
	root := s.contentRoot(ctx)
	if root == "" {
		t.Fatal("containerd's content store is not readable here (the test runs beside the test containerd)")
	}
	// The upload directory of a server beside containerd: one file system.
	dir, err := os.MkdirTemp(filepath.Dir(root), "cornus-test-uploads-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	repo := registrytest.UniqueRepo("cornus-t-place/app")
	forgetRepos(t, b, "cornus-t-place/")
	data := "placed " + repo
	d := digest.FromString(data)
	upload := filepath.Join(dir, "upload")
	if err := os.WriteFile(upload, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(upload)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := s.PutBlob(ctx, repo, d, int64(len(data)), f); err != nil {
		t.Fatal(err)
	}
	up, err := os.Stat(upload)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := os.Stat(blobPath(root, d))
	if err != nil || !os.SameFile(up, blob) {
		t.Fatalf("the blob is not the upload's file: %v", err)
	}
	if size, err := s.Blob(ctx, repo, d); err != nil || size != int64(len(data)) {
		t.Fatalf("the placed blob in the store: %d %v", size, err)
	}
	got, err := content.ReadBlob(b.ns(ctx), b.cli.ContentStore(), ocispec.Descriptor{Digest: d, Size: int64(len(data))})
	if err != nil || string(got) != data {
		t.Fatalf("reading the placed blob through containerd: %q %v", got, err)
	}
}
