package pin

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/containerd/errdefs"
)

// Security round 2, item 6: a pin is of the regular file that was there,
// never of what a symlink put in its place names; a symlink, a directory
// or a missing file is refused; Remove leaves nothing and may repeat.
func TestFileFollowsNoLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	dir := t.TempDir()
	src, secret, pinned := filepath.Join(dir, "one.conf"), filepath.Join(dir, "secret"), filepath.Join(dir, "one.pin")
	for p, s := range map[string]string{src: "one\n", secret: "secret\n"} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := File(src, pinned); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Remove(pinned) })
	if err := os.Rename(src, src+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, src); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(pinned); err != nil || string(b) != "one\n" {
		t.Errorf("the pin after the swap: %q %v, want the file that was pinned", b, err)
	}
	for name, path := range map[string]string{"symlink": src, "directory": dir, "missing": filepath.Join(dir, "none")} {
		err := File(path, filepath.Join(dir, name+".pin"))
		if err == nil {
			t.Errorf("%s: pinned", name)
			_ = Remove(filepath.Join(dir, name+".pin"))
		} else if name != "missing" && !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: %v, want invalid argument", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name+".pin")); !os.IsNotExist(err) {
			t.Errorf("%s: a pin file was left: %v", name, err)
		}
	}
	for range 2 {
		if err := Remove(pinned); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(pinned); !os.IsNotExist(err) {
		t.Errorf("after Remove: %v", err)
	}
}

// A followed pin takes an edit by rename (a new regular file) and never
// a symlink put in its place.
func TestFollowTakesRenamesNotLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	dir := t.TempDir()
	src, secret, pinned := filepath.Join(dir, "one.conf"), filepath.Join(dir, "secret"), filepath.Join(dir, "one.pin")
	for p, s := range map[string]string{src: "one\n", secret: "secret\n", src + ".new": "two\n"} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Follow(src, pinned, time.Hour) // refreshed by hand below
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Remove() })
	if again, err := p.Refresh(); again || err != nil {
		t.Fatalf("refresh of an unchanged file: %t %v", again, err)
	}
	if err := os.Rename(src+".new", src); err != nil {
		t.Fatal(err)
	}
	if again, err := p.Refresh(); !again || err != nil {
		t.Fatalf("refresh after an edit by rename: %t %v", again, err)
	}
	if b, _ := os.ReadFile(pinned); string(b) != "two\n" {
		t.Fatalf("the pin after the edit: %q", b)
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, src); err != nil {
		t.Fatal(err)
	}
	if again, err := p.Refresh(); again || err != nil {
		t.Fatalf("refresh after a symlink swap: %t %v", again, err)
	}
	if b, _ := os.ReadFile(pinned); string(b) != "two\n" {
		t.Fatalf("the pin after a symlink swap: %q, want the last regular file", b)
	}
	if err := p.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pinned); !os.IsNotExist(err) {
		t.Errorf("after Remove: %v", err)
	}
}
