//go:build linux

package export

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// Locks down issue 27's "renames out of the tree" for both confinements:
// while the host swaps a directory of the export with a symlink to a
// directory outside it (atomically, RENAME_EXCHANGE, over and over), the
// peer walks into it and reads; it must never read the outside file, and
// must have read the inside one (else the test proves nothing).
func TestSwapRaceStaysInside(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, outside := layout(t)
		if err := os.WriteFile(filepath.Join(src, "dir", "secret"), []byte("inside"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(src, "swap")); err != nil {
			t.Fatal(err)
		}
		root := client(t, src, o)
		var stop atomic.Bool
		swaps := make(chan int, 1)
		go func() {
			n := 0
			for !stop.Load() {
				if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(src, "dir"), unix.AT_FDCWD, filepath.Join(src, "swap"), unix.RENAME_EXCHANGE); err != nil {
					t.Error(err)
					break
				}
				n++
			}
			swaps <- n
		}()
		n := -1
		t.Cleanup(func() { // before the temporary directory goes
			if n < 0 {
				stop.Store(true)
				<-swaps
			}
		})
		inside := 0
		for range 3000 {
			_, f, err := root.Walk([]string{"dir", "secret"})
			if err != nil {
				continue
			}
			if _, _, err := f.Open(p9.ReadOnly); err == nil {
				buf := make([]byte, 16)
				n, err := f.ReadAt(buf, 0)
				if err != nil && !errors.Is(err, io.EOF) {
					t.Errorf("read: %v", err)
				}
				switch string(buf[:n]) {
				case "secret":
					t.Fatal("read the outside secret through a swapped-in symlink")
				case "inside":
					inside++
				}
			}
			f.Close()
		}
		stop.Store(true)
		n = <-swaps
		if inside == 0 || n == 0 {
			t.Fatalf("read inside %d times over %d swaps: the race was not run", inside, n)
		}
		t.Logf("%d reads inside, %d swaps", inside, n)
	})
}
