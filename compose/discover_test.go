package compose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiscover locks down issue 16's choice of file: the nearest directory
// wins (a devcontainer here beats a compose.yaml in a parent), a Compose
// file wins within one directory, every devcontainer location is searched.
func TestDiscover(t *testing.T) {
	root := t.TempDir()
	touch(t, filepath.Join(root, "compose.yaml"))
	sub := filepath.Join(root, "svc")
	touch(t, filepath.Join(sub, ".devcontainer.json"))

	d, err := Discover(sub)
	if err != nil || d.Devcontainer != filepath.Join(sub, ".devcontainer.json") || len(d.Files) != 0 {
		t.Fatalf("devcontainer here vs compose.yaml above: %+v %v", d, err)
	}
	touch(t, filepath.Join(root, ".devcontainer", "devcontainer.json"))
	d, err = Discover(root)
	if err != nil || len(d.Files) != 1 || d.Also != filepath.Join(root, ".devcontainer", "devcontainer.json") {
		t.Fatalf("same directory: %+v %v", d, err)
	}
	deep := filepath.Join(root, "deep", "er")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if d, err = Discover(deep); err != nil || d.Files[0] != filepath.Join(root, "compose.yaml") {
		t.Fatalf("from below: %+v %v", d, err)
	}

	multi := t.TempDir()
	touch(t, filepath.Join(multi, ".devcontainer", "go", "devcontainer.json"))
	if d, err = Discover(multi); err != nil || !strings.HasSuffix(d.Devcontainer, ".devcontainer/go/devcontainer.json") {
		t.Fatalf("one subfolder: %+v %v", d, err)
	}
	touch(t, filepath.Join(multi, ".devcontainer", "py", "devcontainer.json"))
	if _, err = Discover(multi); err == nil || !strings.Contains(err.Error(), "--config") || !strings.Contains(err.Error(), ".devcontainer/py/devcontainer.json") {
		t.Fatalf("several subfolders: %v", err)
	}
}
