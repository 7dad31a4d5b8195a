package builder

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// handingSite is a site whose build hands something over to the source
// (as the OCI site hands over a base image, holding the store's content
// lock until the source is closed).
type handingSite struct{ released bool }

func (s *handingSite) build(_ context.Context, _ job, src *source, _ run) (string, error) {
	src.onCleanup(func() { s.released = true })
	return "sha256:0", nil
}

func (s *handingSite) close() error { return nil }

// TestBuildReleasesWhatItsSiteTook: what a site adds to the source's
// cleanup during the build is released when the build ends. It was not
// (the deferred cleanup was bound before the build added to it): a base
// image a bare or incus build read stayed locked until a GC closed the
// lock file, so removing any image waited two minutes.
func TestBuildReleasesWhatItsSiteTook(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &handingSite{}
	x := &Builder{site: s}
	if _, err := x.BuildOne(context.Background(), "app", spec.Build{Context: dir}, nil, "", Options{Progress: "quiet"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	if !s.released {
		t.Fatal("the build ended with what its site took still held")
	}
}
