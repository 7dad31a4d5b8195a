package fuse

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
)

// plant lays out an exported tree with ways out planted in it, next to an
// outside directory holding a secret.
func plant(t *testing.T, fx *fixture) (outside string) {
	t.Helper()
	outside = filepath.Join(fx.base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(outside, "secret"), "secret")
	write(t, filepath.Join(fx.src, "file"), "inside")
	for target, link := range map[string]string{
		"/etc":              "etc",        // absolute, out of the tree
		"../outside":        "up",         // relative, climbing out
		outside:             "out",        // absolute, to the secret's dir
		"../outside/secret": "secretlink", // relative, to the secret file
	} {
		if err := os.Symlink(target, filepath.Join(fx.src, link)); err != nil {
			t.Fatal(err)
		}
	}
	return outside
}

// Locks down issue 12: escape attempts through the mount fail and change
// nothing outside the exported tree.
func TestEscapes(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		fx := mountFixture(t, eo, Options{})
		outside := plant(t, fx)
		mnt := func(p ...string) string { return filepath.Join(append([]string{fx.mnt}, p...)...) }

		// Symlinks are links, read as text; the export never follows them.
		if got, err := os.Readlink(mnt("etc")); err != nil || got != "/etc" {
			t.Fatalf("readlink etc = %q, %v", got, err)
		}
		// A relative link that climbs out resolves on the mount side, where
		// it climbs to nothing.
		if _, err := os.ReadFile(mnt("secretlink")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("read through ../ link: %v, want ENOENT", err)
		}
		// O_NOFOLLOW on a planted link is ELOOP, as on any file system.
		if _, err := os.OpenFile(mnt("secretlink"), os.O_RDONLY|syscall.O_NOFOLLOW, 0); !errors.Is(err, syscall.ELOOP) {
			t.Fatalf("O_NOFOLLOW open of a link: %v, want ELOOP", err)
		}
		// A hard link to a file outside the mount crosses devices.
		if err := os.Link(filepath.Join(outside, "secret"), mnt("hl")); !errors.Is(err, syscall.EXDEV) {
			t.Fatalf("link from outside: %v, want EXDEV", err)
		}
		// A hard link of a planted link links the link, not what it names.
		if err := os.Link(mnt("secretlink"), mnt("hl2")); err != nil {
			t.Fatalf("link of a symlink: %v", err)
		}
		if fi, err := os.Lstat(filepath.Join(fx.src, "hl2")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("hl2 in the export: %v, %v; want a symlink", fi, err)
		}
		// Rename out of the tree through a planted link: the link resolves on
		// the mount side to another file system.
		if err := os.Rename(mnt("file"), mnt("out", "file")); !errors.Is(err, syscall.EXDEV) {
			t.Fatalf("rename through a link: %v, want EXDEV", err)
		}
		if got := read(t, filepath.Join(fx.src, "file")); got != "inside" {
			t.Fatalf("file = %q after the rename attempt", got)
		}
		// Creating through a link to a directory outside never lands outside.
		_ = os.WriteFile(mnt("up", "planted"), []byte("x"), 0o644)
		_ = os.WriteFile(mnt("out", "planted2"), []byte("x"), 0o644) // same host: out is /…/outside itself
		if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
			t.Fatal("a write through ../ link landed outside the export")
		}
		// Device nodes are refused by the export.
		if err := syscall.Mknod(mnt("null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			t.Fatal("mknod of a char device succeeded")
		}
		if _, err := os.Lstat(filepath.Join(fx.src, "null")); err == nil {
			t.Fatal("a device node was created in the export")
		}
		// A FIFO is a file like any other.
		if err := syscall.Mkfifo(mnt("fifo"), 0o644); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
		// Set-user-id never reaches the exported file (the 9P wire masks
		// set-id bits; the export refuses them besides). os.Chmod takes
		// Go's mode bits, where 0o4755 is 0o755: the raw call asks for
		// the bit.
		_ = syscall.Chmod(mnt("file"), 0o4755)
		if fi, err := os.Lstat(filepath.Join(fx.src, "file")); err != nil || fi.Mode()&os.ModeSetuid != 0 {
			t.Fatalf("file after chmod u+s: %v, %v", fi.Mode(), err)
		}
		if got := read(t, filepath.Join(outside, "secret")); got != "secret" {
			t.Fatalf("outside secret changed to %q", got)
		}
	})
}
