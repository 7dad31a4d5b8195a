package registry

import (
	"context"
	"strings"
	"testing"
)

// Usage counts each manifest, config and layer once across repositories,
// at the size the store has (a manifest that claims a layer is small
// does not make it so), and a blob no manifest names not at all.
func TestUsage(t *testing.T) {
	ctx := context.Background()
	s, put := blobStore(t)
	manifest := imageManifest
	big := strings.Repeat("x", 1000)
	layer, config := put("a", big), put("a", "config")
	put("a", strings.Repeat("o", 5000)) // an orphan: collected, not counted
	m1 := manifest(config, layer)
	if err := s.PutManifest(ctx, "a", m1, "1"); err != nil {
		t.Fatal(err)
	}
	if err := s.LinkBlob(ctx, "b", layer); err != nil {
		t.Fatal(err)
	}
	config2 := put("b", "config2")
	m2 := manifest(config2, layer) // the same layer, in another repository
	if err := s.PutManifest(ctx, "b", m2, "1"); err != nil {
		t.Fatal(err)
	}
	want := int64(len(m1.Data) + len(m2.Data) + len(big) + len("config") + len("config2"))
	if got, err := Usage(ctx, s, []string{"a", "b"}); err != nil || got != want {
		t.Fatalf("usage of a and b: %d %v, want %d", got, err, want)
	}
	// A manifest about to be stored counts with what it adds.
	config3 := put("a", "config3")
	m3 := manifest(config3, layer)
	if got, err := Usage(ctx, s, []string{"a"}, RepoManifest{"a", m3}); err != nil || got != int64(len(m1.Data)+len(m3.Data)+len(big)+len("config")+len("config3")) {
		t.Fatalf("usage with a manifest to come: %d %v", got, err)
	}
}
