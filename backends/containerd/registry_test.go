package containerd

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"

	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// TestPullFromCornusRegistry: containerd's pull (its resolver, which
// follows the registry's Bearer challenge to /v2/token, as the CRI does
// for kubelet) fetches an image pushed to cornus's registry with the
// manifest digest it was pushed with; a wrong token gets nothing.
func TestPullFromCornusRegistry(t *testing.T) {
	b := newTestBackend(t)
	dir := t.TempDir()
	store, err := registry.NewFSStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := registry.New(registry.Config{Store: store, Auth: registrytest.TokenAuth("s3cret"), UploadDir: filepath.Join(dir, "uploads")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, manifest := registrytest.Client{T: t, Base: srv.URL, Token: "s3cret"}.PushImage("team/app", "1", []byte("a layer"))
	ref := strings.TrimPrefix(srv.URL, "http://") + "/team/app:1"
	pull := func(token string) (client.Image, error) {
		creds := docker.WithAuthCreds(func(string) (string, string, error) { return "anyone", token, nil })
		resolver := docker.NewResolver(docker.ResolverOptions{Hosts: docker.ConfigureDefaultRegistries(
			docker.WithPlainHTTP(docker.MatchLocalhost), docker.WithAuthorizer(docker.NewDockerAuthorizer(creds)))})
		return b.cli.Pull(b.ns(context.Background()), ref, client.WithResolver(resolver))
	}
	if _, err := pull("wrong"); err == nil {
		t.Fatal("a pull with a wrong token succeeded")
	}
	img, err := pull("s3cret")
	if err != nil {
		t.Fatalf("containerd's pull: %v", err)
	}
	t.Cleanup(func() {
		if err := b.cli.ImageService().Delete(b.ns(context.Background()), img.Name(), images.SynchronousDelete()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if got := img.Target().Digest; got != manifest {
		t.Fatalf("pulled manifest %s, pushed %s", got, manifest)
	}
}
