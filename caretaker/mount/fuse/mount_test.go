package fuse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
)

// fixture is an export served in this process and mounted over a
// socketpair.
type fixture struct {
	base, src, mnt string
	fs             *FS
	cancelExport   context.CancelFunc
	exportDone     chan error
}

func socketpair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return conn(fds[0]), conn(fds[1])
}

func needFUSE(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("needs root or fusermount3 (apt-get install fuse3)")
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("needs /dev/fuse")
	}
}

// mountFixture serves src (created empty under a fresh base) and mounts it at
// base/a/b/mnt: deeper than src, so a relative symlink that climbs out of
// src resolves to nothing on the mount side.
// eachExport runs f per confinement of the export: openat2 and the
// portable one (issue 27), so both are proven through a real mount.
func eachExport(t *testing.T, f func(t *testing.T, eo export.Options)) {
	for _, eo := range []export.Options{{}, {Portable: true}} {
		name := "openat2"
		if eo.Portable {
			name = "portable"
		}
		t.Run(name, func(t *testing.T) { f(t, eo) })
	}
}

func mountFixture(t *testing.T, eo export.Options, o Options) *fixture {
	t.Helper()
	needFUSE(t)
	base := t.TempDir()
	fx := &fixture{base: base, src: filepath.Join(base, "src"), mnt: filepath.Join(base, "a", "b", "mnt"), exportDone: make(chan error, 1)}
	for _, d := range []string{fx.src, fx.mnt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return fx.start(t, eo, o)
}

func (fx *fixture) start(t *testing.T, eo export.Options, o Options) *fixture {
	t.Helper()
	ec, mc := socketpair(t)
	ctx, cancel := context.WithCancel(context.Background())
	fx.cancelExport = cancel
	go func() { fx.exportDone <- export.Serve(ctx, ec, fx.src, eo) }()
	mctx, mcancel := context.WithCancel(context.Background())
	m, err := Mount(mctx, mc, fx.mnt, o)
	if err != nil {
		mcancel()
		cancel()
		t.Fatal(err)
	}
	fx.fs = m
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		if IsMounted(fx.mnt) {
			_ = lazyUnmount(fx.mnt)
			t.Errorf("%s still mounted after Unmount", fx.mnt)
		}
		mcancel()
		cancel()
	})
	return fx
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Locks down issue 12: a write from the server side lands in the client's
// directory.
func TestWriteThroughMount(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		fx := mountFixture(t, eo, Options{})
		if err := os.MkdirAll(filepath.Join(fx.mnt, "d", "e"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(fx.mnt, "d", "e", "f.txt"), "from the container\n")
		if got := read(t, filepath.Join(fx.src, "d", "e", "f.txt")); got != "from the container\n" {
			t.Fatalf("export has %q", got)
		}
		big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: several 1 MiB writes
		if err := os.WriteFile(filepath.Join(fx.mnt, "big"), big, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(fx.src, "big")); err != nil || !bytes.Equal(got, big) {
			t.Fatalf("big file differs in the export (%d bytes, %v)", len(got), err)
		}
		if got, err := os.ReadFile(filepath.Join(fx.mnt, "big")); err != nil || !bytes.Equal(got, big) {
			t.Fatalf("big file differs through the mount (%d bytes, %v)", len(got), err)
		}
	})
}

// Locks down issue 12: the client edits a file and the server side reads
// the new content, after at most the cache timeout; also when an editor
// replaces the file by rename.
func TestEditInExportIsSeen(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		fx := mountFixture(t, eo, Options{})
		write(t, filepath.Join(fx.src, "main.go"), "package main // v1\n")
		if got := read(t, filepath.Join(fx.mnt, "main.go")); got != "package main // v1\n" {
			t.Fatalf("mount reads %q", got)
		}
		write(t, filepath.Join(fx.src, "main.go"), "package main // version 2\n")
		write(t, filepath.Join(fx.src, "tmp"), "package main // v3 (renamed over)\n")
		eventually(t, func() bool { return read(t, filepath.Join(fx.mnt, "main.go")) == "package main // version 2\n" })
		if err := os.Rename(filepath.Join(fx.src, "tmp"), filepath.Join(fx.src, "main.go")); err != nil {
			t.Fatal(err)
		}
		eventually(t, func() bool { return read(t, filepath.Join(fx.mnt, "main.go")) == "package main // v3 (renamed over)\n" })
		write(t, filepath.Join(fx.src, "new.go"), "package main\n")
		eventually(t, func() bool { _, err := os.Stat(filepath.Join(fx.mnt, "new.go")); return err == nil })
	})
}

// eventually polls cond for a few cache timeouts.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * cacheTTL)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 cache timeouts")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Locks down issue 12: :ro refuses writes with EROFS, enforced by the
// exporting side even when the mount itself is read-write.
func TestReadOnly(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		for _, tc := range []struct {
			name string
			o    Options
		}{{"export only", Options{}}, {"export and mount", Options{ReadOnly: true}}} {
			t.Run(tc.name, func(t *testing.T) {
				fx := mountFixture(t, export.Options{ReadOnly: true, Portable: eo.Portable}, tc.o)
				write(t, filepath.Join(fx.src, "f"), "keep")
				if err := os.Mkdir(filepath.Join(fx.src, "d"), 0o755); err != nil {
					t.Fatal(err)
				}
				f := filepath.Join(fx.mnt, "f")
				if got := read(t, f); got != "keep" {
					t.Fatalf("read %q", got)
				}
				ops := map[string]func() error{
					"create":   func() error { return os.WriteFile(filepath.Join(fx.mnt, "new"), nil, 0o644) },
					"write":    func() error { return os.WriteFile(f, []byte("changed"), 0o644) },
					"truncate": func() error { return os.Truncate(f, 0) },
					"chmod":    func() error { return os.Chmod(f, 0o600) },
					"chtimes":  func() error { return os.Chtimes(f, time.Now(), time.Now()) },
					"mkdir":    func() error { return os.Mkdir(filepath.Join(fx.mnt, "nd"), 0o755) },
					"remove":   func() error { return os.Remove(f) },
					"rmdir":    func() error { return os.Remove(filepath.Join(fx.mnt, "d")) },
					"rename":   func() error { return os.Rename(f, filepath.Join(fx.mnt, "g")) },
					"symlink":  func() error { return os.Symlink("f", filepath.Join(fx.mnt, "l")) },
					"link":     func() error { return os.Link(f, filepath.Join(fx.mnt, "h")) },
				}
				for name, op := range ops {
					if err := op(); !errors.Is(err, syscall.EROFS) {
						t.Errorf("%s: got %v, want EROFS", name, err)
					}
				}
				if got := read(t, filepath.Join(fx.src, "f")); got != "keep" {
					t.Fatalf("export file changed to %q", got)
				}
			})
		}
	})
}

// Locks down the fid budget: with far more inodes in use than walked fids
// allowed, every file still reads right (evicted nodes walk again) and
// the export holds at most the budget.
func TestFidBudget(t *testing.T) {
	fx := mountFixture(t, export.Options{}, Options{})
	fx.fs.fids.mu.Lock()
	fx.fs.fids.max = 8
	fx.fs.fids.mu.Unlock()
	for i := range 40 {
		d := filepath.Join(fx.src, fmt.Sprintf("d%d", i%4))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d, fmt.Sprintf("f%d", i)), fmt.Sprint(i))
	}
	for round := range 2 {
		for i := range 40 {
			p := filepath.Join(fx.mnt, fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%d", i))
			if got := read(t, p); got != fmt.Sprint(i) {
				t.Fatalf("round %d: %s = %q", round, p, got)
			}
		}
	}
	fx.fs.fids.mu.Lock()
	held := fx.fs.fids.lru.Len()
	fx.fs.fids.mu.Unlock()
	if held > 8 {
		t.Fatalf("%d walked fids held, budget 8", held)
	}
}

// Locks down listings with attributes (READDIRPLUS, walked ahead in
// parallel): every entry appears once, with its own size.
func TestListingWithAttributes(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		fx := mountFixture(t, eo, Options{})
		const n = 700
		for i := range n {
			write(t, filepath.Join(fx.src, fmt.Sprintf("f%04d", i)), strings.Repeat("x", i))
		}
		for round := range 2 {
			ents, err := os.ReadDir(fx.mnt)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != n {
				t.Fatalf("round %d: %d entries, want %d", round, len(ents), n)
			}
			for _, e := range ents {
				fi, err := e.Info()
				if err != nil {
					t.Fatal(err)
				}
				var i int
				if _, err := fmt.Sscanf(e.Name(), "f%04d", &i); err != nil {
					t.Fatalf("%s: %v", e.Name(), err)
				}
				if fi.Size() != int64(i) {
					t.Fatalf("%s: size %d, want %d", e.Name(), fi.Size(), i)
				}
			}
		}
	})
}
