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
	tWalkGetAttr = 126
	tStatdir     = 220
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

func (c *countingConn) counts() (walks, statdirs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[tWalkGetAttr], c.count[tStatdir]
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

// Locks down issue 29's listing: a cornus export gives a listing's
// attributes by Tstatdir, MaxNames entries to a round trip, with no walk
// per entry.
func TestListingUsesStatdir(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		needFUSE(t)
		fx := &fixture{src: t.TempDir(), mnt: t.TempDir(), exportDone: make(chan error, 1)}
		const n = 700
		writeSized(t, fx.src, n)
		cc := fx.startCounting(t, eo)
		listSizes(t, fx.mnt, n)
		walks, statdirs := cc.counts()
		if walks > 2 || statdirs < 2 || statdirs > 4 {
			t.Fatalf("listing %d entries took %d walks and %d Tstatdirs; want about 2 Tstatdirs (probe and %d-name batches) and no walk per entry", n, walks, statdirs, 512)
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
// export (hugelgupf's localfs) refuses Tstatdir once, at mount, and the
// listing's attributes come from walks, each entry its own.
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
	if walks, statdirs := cc.counts(); statdirs != 1 || walks < n {
		t.Fatalf("%d walks and %d Tstatdirs; want the probe alone and a walk per entry", walks, statdirs)
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
