package kernel9p

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
)

// Detection reads the kernel's list: a "nodev 9p" line, not a substring
// of another file system's name.
func TestListsNinep(t *testing.T) {
	for text, want := range map[string]bool{
		"nodev\tsysfs\nnodev\t9p\n\text4\n": true,
		"nodev\tsysfs\n\text4\nfuseblk\n":   false,
		"nodev\tv9p\n":                      false,
		"":                                  false,
	} {
		if got := listsNinep(strings.NewReader(text)); got != want {
			t.Errorf("listsNinep(%q) = %v, want %v", text, got, want)
		}
	}
}

// The option string names the kernel's fd both ways, 9P2000.L, the
// shared attach and no cache.
func TestMountData(t *testing.T) {
	d := mountData(7)
	for _, want := range []string{"trans=fd", "rfdno=7", "wfdno=7", "version=9p2000.L", "access=any", "cache=none"} {
		if !strings.Contains(d, want) {
			t.Errorf("mount data %q lacks %s", d, want)
		}
	}
}

// Where the kernel has 9p (not this project's CI machines: their kernel
// has none, so package fuse carries the mounts there), a file written
// through the mount lands in the export and unmount leaves nothing.
func TestMountRoundTrip(t *testing.T) {
	if !Available() {
		t.Skip("this kernel has no 9p file system (/proc/filesystems); the FUSE path (package fuse) serves client-local mounts here")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	src, dir := t.TempDir(), t.TempDir()
	a, b := net.Pipe()
	go func() { _ = export.Serve(t.Context(), a, src, export.Options{}) }()
	m, err := Mount(t.Context(), b, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unmount() }() // for a failure before the checked Unmount below
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(src, "f")); err != nil || string(got) != "hi" {
		t.Fatalf("export has %q, %v", got, err)
	}
	if err := m.Unmount(); err != nil {
		t.Fatal(err)
	}
}

// Where the kernel has no 9p, Mount fails naming 9p and leaves nothing
// behind: the connection is closed and its copies have ended.
func TestMountWithout9p(t *testing.T) {
	if Available() {
		t.Skip("this kernel has 9p: TestMountRoundTrip covers it")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	a, b := net.Pipe()
	defer a.Close()
	_, err := Mount(t.Context(), b, t.TempDir(), Options{})
	if err == nil || !strings.Contains(err.Error(), "9p") {
		t.Fatalf("mount without 9p: %v", err)
	}
	if _, err := a.Write([]byte{0}); err == nil {
		t.Fatal("the export's connection is still open")
	}
}
