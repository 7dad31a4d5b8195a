package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/registry/registrytest"
	"github.com/cornus-dev/cornus/spec"
)

// TestRegistryBuild: where the nodes pull, a build through the server
// runs on cornus's buildkitd, reads its base from the tenant's registry
// repository, and lands in the registry as the tenant's, whence the up
// runs it by digest. Bob can neither build FROM alice's registry image
// nor build over her tag, and does not see what she built.
func TestRegistryBuild(t *testing.T) {
	ts := newTestServerOver(t, func(b backends.Backend) backends.Backend { return pullingBackend{b, b.(backends.Images)} })
	ctx := context.Background()
	host := strings.TrimPrefix(ts.http.URL, "http://")
	ts.srv.cfg.RegistryHost = host
	alice := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.alice}
	base, built := uniqueProject("alice-base-"), uniqueProject("alice-built-")
	t.Cleanup(func() { alice.DeleteRepo(base); alice.DeleteRepo(built) })

	var arc bytes.Buffer
	if err := testimage.BuildBusybox(&arc, testimage.Options{Ref: base + ":1", OnBuild: []string{"RUN true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.clientOf(ts.alice).LoadImage(ctx, bytes.NewReader(arc.Bytes())); err != nil {
		t.Fatalf("alice's load of her base: %v", err)
	}
	res, err := ts.buildAs(ts.alice, buildProject(t, built+":1", "FROM "+base+":1\nRUN echo alice > /who\n", spec.Build{}))
	if err != nil {
		t.Fatalf("alice's build: %v", err)
	}
	if len(res.Images) != 1 || res.Images[0].ID == "" {
		t.Fatalf("alice's build result: %+v", res)
	}
	code, hdr, body := alice.Do("GET", "/v2/"+built+"/manifests/1", nil)
	if code != http.StatusOK {
		t.Fatalf("the build is not in the registry: %d %s", code, body)
	}
	digest := hdr.Get("Docker-Content-Digest")
	if got := fileInImage(t, alice, built, []byte(body), "who"); got != "alice\n" {
		t.Fatalf("the built image's /who is %q, want the RUN's output", got)
	}

	// Listed for alice (an up without --build finds it), not for bob.
	for tok, want := range map[string]bool{ts.alice: true, ts.bob: false} {
		_, list := ts.request("GET", "/v1/images", tok, nil)
		if strings.Contains(list, built) != want {
			t.Errorf("the listing shows alice's built image: %t, want %t:\n%s", !want, want, list)
		}
	}
	// Her up runs it from the registry, by digest.
	p := sleeperProject(uniqueProject("nodes"))
	app := p.Services["app"]
	app.Image = built + ":1"
	p.Services["app"] = app
	got, err := ts.srv.admitUp(ctx, "alice", p, nil, nil)
	if err != nil {
		t.Fatalf("alice's up of her build: %v", err)
	}
	if a := got.Services["app"]; a.Image != host+"/"+built+"@"+digest || a.PullAuth == nil {
		t.Fatalf("alice's up runs %s with %+v, want %s/%s@%s with her pull credential", a.Image, a.PullAuth, host, built, digest)
	}

	for _, c := range []struct{ name, image, df string }{
		{"FROM alice's registry image", uniqueProject("bob-") + ":1", "FROM " + built + ":1\nRUN true\n"},
		{"alice's tag", built + ":1", "FROM " + base + ":1\n"},
		{"a tag in alice's repository", built + ":2", "FROM " + base + ":1\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ts.buildAs(ts.bob, buildProject(t, c.image, c.df, spec.Build{}))
			if !errdefs.IsPermissionDenied(err) {
				t.Fatalf("want a refusal, got %v", err)
			}
		})
	}
	if code, _, _ := alice.Do("GET", "/v2/"+built+"/manifests/2", nil); code != http.StatusNotFound {
		t.Errorf("bob's refused build left a tag in alice's repository: %d", code)
	}
	if _, hdr, _ := alice.Do("HEAD", "/v2/"+built+"/manifests/1", nil); hdr.Get("Docker-Content-Digest") != digest {
		t.Errorf("alice's tag after bob's attempts names %q, want %s", hdr.Get("Docker-Content-Digest"), digest)
	}
}

// fileInImage reads file name from the top layer of the image whose
// manifest is manifest.
func fileInImage(t *testing.T, c registrytest.Client, repo string, manifest []byte, name string) string {
	t.Helper()
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil || len(m.Layers) == 0 {
		t.Fatalf("manifest: %v %s", err, manifest)
	}
	code, _, blob := c.Do("GET", "/v2/"+repo+"/blobs/"+m.Layers[len(m.Layers)-1].Digest.String(), nil)
	if code != http.StatusOK {
		t.Fatalf("top layer: %d", code)
	}
	var r io.Reader = strings.NewReader(blob)
	if zr, err := gzip.NewReader(strings.NewReader(blob)); err == nil {
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			t.Fatalf("top layer: %v", err)
		}
		if strings.TrimPrefix(h.Name, "./") == name {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
	}
}
