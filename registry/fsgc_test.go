package registry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
)

// GC frees blobs no manifest names and content no repository holds,
// once older than the grace period, and nothing a manifest names.
func TestFSStoreGC(t *testing.T) {
	ctx := context.Background()
	s, put := blobStore(t)
	layer, config := put("r", "layer"), put("r", "config")
	mf := imageManifest(config, layer)
	man := mf.Digest
	if err := s.PutManifest(ctx, "r", mf, "1"); err != nil {
		t.Fatal(err)
	}
	orphan := put("r", "orphan") // linked, named by no manifest
	unlinked := put("r2", "unlinked")
	if err := s.DeleteBlob(ctx, "r2", unlinked); err != nil {
		t.Fatal(err)
	}
	age(t, s.dir, 2*time.Hour)
	fresh := put("r", "fresh") // a push whose manifest has not come yet

	st, err := s.GC(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if st != (GCStats{Links: 1, Blobs: 2, Bytes: int64(len("orphan") + len("unlinked"))}) {
		t.Fatalf("first collection: %+v, want the orphan's link, and the orphan and the unlinked blob", st)
	}
	for _, d := range []digest.Digest{layer, config, fresh} {
		if _, err := s.Blob(ctx, "r", d); err != nil {
			t.Fatalf("blob %s, named or fresh, was collected: %v", d, err)
		}
	}
	if got, err := s.Manifest(ctx, "r", "1"); err != nil || got.Digest != man {
		t.Fatalf("the manifest after a collection: %v %v", got.Digest, err)
	}
	for _, d := range []digest.Digest{orphan, unlinked} {
		if _, err := os.Stat(s.blobPath(d)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("blob %s is still stored (%v)", d, err)
		}
	}

	// Once its manifest is deleted, the image goes whole.
	if err := s.DeleteManifest(ctx, "r", man); err != nil {
		t.Fatal(err)
	}
	age(t, s.dir, 2*time.Hour)
	if st, err = s.GC(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if st.Links != 3 || st.Blobs != 4 {
		t.Fatalf("after the manifest's delete: %+v, want the layer's, config's and fresh blob's links, and them and the manifest", st)
	}
}

// age backdates every file under dir.
func age(t *testing.T, dir string, by time.Duration) {
	t.Helper()
	then := time.Now().Add(-by)
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		return os.Chtimes(p, then, then)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// blobStore is a new FSStore, and put, which stores content as a blob of
// repo and returns its digest.
func blobStore(t *testing.T) (*FSStore, func(repo, content string) digest.Digest) {
	t.Helper()
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s, func(repo, content string) digest.Digest {
		t.Helper()
		d := digest.FromString(content)
		if err := s.PutBlob(context.Background(), repo, d, int64(len(content)), strings.NewReader(content)); err != nil {
			t.Fatal(err)
		}
		return d
	}
}

// imageManifest is an image manifest of config and one layer (the sizes
// it claims are not theirs: stores must not trust them).
func imageManifest(config, layer digest.Digest) Manifest {
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"digest": config, "size": 6}, "layers": []any{map[string]any{"digest": layer, "size": 5}}})
	return Manifest{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: digest.FromBytes(m), Data: m}
}
