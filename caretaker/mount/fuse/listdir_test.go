package fuse

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
	"github.com/hugelgupf/p9/fsimpl/localfs"
	"github.com/hugelgupf/p9/p9"
)

// The 9P message types the listing tests count.
const (
	tLopen       = 12
	tReaddir     = 40
	tWalk        = 110
	tWalkGetAttr = 126
	tListdir     = 222
)

// countingConn counts the 9P requests the mount sends, by type.
type countingConn struct {
	net.Conn
	mu    sync.Mutex
	skip  int // bytes of the current frame still to come
	hdr   []byte
	count map[byte]int
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	for b := p; len(b) > 0; {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip, b = c.skip-k, b[k:]
			continue
		}
		k := min(7-len(c.hdr), len(b))
		c.hdr, b = append(c.hdr, b[:k]...), b[k:]
		if len(c.hdr) == 7 {
			c.count[c.hdr[4]]++
			c.skip = int(binary.LittleEndian.Uint32(c.hdr)) - 7
			c.hdr = c.hdr[:0]
		}
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// counts is how many requests went out: those of plain 9P2000.L that a
// listing with attributes takes (walks, opens and reads of directories),
// and Tlistdirs.
func (c *countingConn) counts() (plain, listdirs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[tWalkGetAttr] + c.count[tWalk] + c.count[tLopen] + c.count[tReaddir], c.count[tListdir]
}

// listSizes lists dir with attributes (as ls -l does) and checks every
// entry fN has size N.
func listSizes(t *testing.T, dir string, n int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != n {
		t.Fatalf("%d entries, want %d", len(ents), n)
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		var i int
		if _, err := fmt.Sscanf(e.Name(), "f%04d", &i); err != nil || fi.Size() != int64(i) {
			t.Fatalf("%s: size %d (%v)", e.Name(), fi.Size(), err)
		}
	}
}

func writeSized(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		write(t, filepath.Join(dir, fmt.Sprintf("f%04d", i)), strings.Repeat("x", i))
	}
}

// Locks down issue 29's listing: a cornus export lists a directory with
// its entries' attributes by Tlistdir, MaxEntries to a round trip: no
// walk, open or read of the directory, and no walk per entry.
func TestListingUsesListdir(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		needFUSE(t)
		fx := &fixture{src: t.TempDir(), mnt: t.TempDir(), exportDone: make(chan error, 1)}
		const n = 700
		writeSized(t, fx.src, n)
		cc := fx.startCounting(t, eo)
		listSizes(t, fx.mnt, n)
		plain, listdirs := cc.counts()
		if plain != 0 || listdirs != 3 {
			t.Fatalf("listing %d entries took %d walks, opens and reads and %d Tlistdirs; want none and 3 (the mount's probe and two batches of at most 512)", n, plain, listdirs)
		}
	})
}

// startCounting serves fx.src and mounts it at fx.mnt through a
// countingConn.
func (fx *fixture) startCounting(t *testing.T, eo export.Options) *countingConn {
	t.Helper()
	ec, mc := socketpair(t)
	cc := &countingConn{Conn: mc, count: map[byte]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { fx.exportDone <- export.Serve(ctx, ec, fx.src, eo) }()
	m, err := Mount(ctx, cc, fx.mnt, Options{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		cancel()
		if err := <-fx.exportDone; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("export: %v", err)
		}
	})
	return cc
}

// Locks down the fallback to walks: a 9P server that is not a cornus
// export (hugelgupf's localfs) refuses Tlistdir once, at mount, and the
// directory is read through a fid, its entries' attributes from walks.
func TestListingFromStockServer(t *testing.T) {
	needFUSE(t)
	src, mnt := t.TempDir(), t.TempDir()
	const n = 300
	writeSized(t, src, n)
	ec, mc := socketpair(t)
	cc := &countingConn{Conn: mc, count: map[byte]int{}}
	served := make(chan struct{})
	go func() { _ = p9.NewServer(localfs.Attacher(src)).Handle(ec, ec); close(served) }()
	m, err := Mount(context.Background(), cc, mnt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		ec.Close()
		<-served
	}()
	listSizes(t, mnt, n)
	if plain, listdirs := cc.counts(); listdirs != 1 || plain < n {
		t.Fatalf("%d walks, opens and reads and %d Tlistdirs; want the probe alone and a walk per entry", plain, listdirs)
	}
}

// Locks down the cache of listed attributes on a read-write mount: an
// edit through the mount is seen at once on both sides; an edit in the
// export is seen through the mount within the cache's time, whatever the
// listing cached.
func TestListedAttributesFollowEdits(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		fx := mountFixture(t, eo, Options{})
		writeSized(t, fx.src, 3)
		listSizes(t, fx.mnt, 3) // the attributes are cached now
		// Through the mount: both sides see it at once.
		write(t, filepath.Join(fx.mnt, "f0001"), "xxxxxxxxxx")
		for _, p := range []string{fx.mnt, fx.src} {
			if fi, err := os.Lstat(filepath.Join(p, "f0001")); err != nil || fi.Size() != 10 {
				t.Fatalf("after a write through the mount, %s: %v %v", p, fi, err)
			}
		}
		// In the export: a size, a mode, a removal.
		write(t, filepath.Join(fx.src, "f0002"), "y")
		if err := os.Chmod(filepath.Join(fx.src, "f0000"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(fx.src, "f0001")); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		eventually(t, func() bool {
			a, errA := os.Lstat(filepath.Join(fx.mnt, "f0002"))
			b, errB := os.Lstat(filepath.Join(fx.mnt, "f0000"))
			_, errC := os.Lstat(filepath.Join(fx.mnt, "f0001"))
			return errA == nil && a.Size() == 1 && errB == nil && b.Mode().Perm() == 0o600 && errorIs(errC, syscall.ENOENT)
		})
		t.Logf("export edits seen through the mount after %v (cache %v)", time.Since(start).Round(time.Millisecond), cacheTTL)
	})
}

func errorIs(err error, target syscall.Errno) bool {
	pe, ok := err.(*os.PathError)
	return ok && pe.Err == target
}

// Locks down Tlistdir's directory check: it names the directory by path,
// and a directory open on the mount whose path names another directory by
// now (renamed on the exporting side) is listed through its own fid: its
// own entries, never the other's.
func TestListingFollowsRenamedDirectory(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		fx := mountFixture(t, eo, Options{})
		for _, p := range []string{"a", "other"} {
			if err := os.Mkdir(filepath.Join(fx.src, p), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(fx.src, p, "in-"+p), p)
		}
		if _, err := os.Stat(filepath.Join(fx.mnt, "a")); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(fx.mnt, "a"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := os.Rename(filepath.Join(fx.src, "a"), filepath.Join(fx.src, "b")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(fx.src, "other"), filepath.Join(fx.src, "a")); err != nil {
			t.Fatal(err)
		}
		got, err := f.Readdirnames(-1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != "in-a" {
			t.Fatalf("the open directory lists %q, want its own [in-a]", got)
		}
	})
}
