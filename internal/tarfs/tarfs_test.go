package tarfs

import (
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// Write then Extract round-trips a tree (a file, a subdirectory, a
// symlink kept as a link) under a new root name; a rename that leaves
// the tree, and a stream past its limit, are refused.
func TestRoundTrip(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	for name, body := range map[string]string{"a.txt": "alpha", "sub/b.txt": "beta"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	if err := Write(&tb, src, "copy", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := Extract(bytes.NewReader(tb.Bytes()), dst, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"copy/a.txt": "alpha", "copy/sub/b.txt": "beta", "copy/link": "alpha"} {
		if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dst, "copy", "a.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("a.txt's mode: %v %v, want 0640", fi.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "copy", "link")); err != nil || target != "a.txt" {
		t.Errorf("link: %q %v", target, err)
	}

	// The content alone (SRC/.), renamed away from the tree: refused.
	var content bytes.Buffer
	if err := Write(&content, src, "", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(content.String(), "src/") {
		t.Fatal("a content archive holds its directory")
	}
	out := t.TempDir()
	escape := func(name string) string { return path.Join("..", "escaped", name) }
	if err := Extract(bytes.NewReader(content.Bytes()), out, Options{Rename: escape}); err == nil {
		t.Fatal("a rename out of the directory was extracted")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "escaped")); err == nil {
		t.Fatal("an entry was written outside the directory")
	}
	err := Extract(bytes.NewReader(tb.Bytes()), t.TempDir(), Options{Limit: 1024})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("past the limit: %v", err)
	}
}
