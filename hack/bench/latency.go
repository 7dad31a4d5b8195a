package main

// Rows with latency added (issue 29): real remote links have it, and a
// path that is fine on loopback can be latency-bound. The delay is added
// in user space (internal/netdelay: this kernel has no netem).

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
	"github.com/cornus-dev/cornus/internal/netdelay"
)

// latencyTree is the delayed rows' tree: a 20 ms round trip per file
// makes the loopback rows' 10k files minutes long.
var latencyTree = shape{big: 10 << 20, dirs: 10, perDir: 50}

// delayed relays connections on a loopback port to target, each direction
// delayed by oneWay (netdelay.Relay).
func delayed(target string, oneWay time.Duration) (addr string, stop func()) {
	addr, stop, err := netdelay.Relay(target, oneWay)
	if err != nil {
		fail(err)
	}
	return addr, stop
}

// latencyRows compares the cornus mount with sshfs behind the same added
// delay: a 1 ms and a 20 ms round trip.
func latencyRows(runs int) {
	runs = max(min(runs, 3), 1)
	dir, err := os.MkdirTemp("", "cornus-bench-latency-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	tree := filepath.Join(dir, "tree")
	paths, err := makeTree(tree, latencyTree)
	if err != nil {
		fail(fmt.Errorf("latency tree: %w", err))
	}
	port, key := sshfsServer()
	for _, oneWay := range []time.Duration{500 * time.Microsecond, 10 * time.Millisecond} {
		sshAddr, stopSSH := delayed("127.0.0.1:"+port, oneWay)
		_, sshPort, _ := net.SplitHostPort(sshAddr)
		tools := []func(mnt string) (func(), error){
			func(mnt string) (func(), error) { return cornusMountVia(tree, mnt, export.Options{}, oneWay) },
			func(mnt string) (func(), error) { return sshfsMount(tree, mnt, sshPort, key) },
		}
		var t [2]struct{ read, stat, walk []time.Duration }
		for i := range runs {
			for k := range tools {
				j := (i + k) % len(tools)
				mnt := filepath.Join(dir, fmt.Sprintf("mnt-%d-%d-%d", oneWay.Microseconds(), j, i))
				if err := os.Mkdir(mnt, 0o755); err != nil {
					fail(err)
				}
				unmount, err := tools[j](mnt)
				if err != nil {
					fail(fmt.Errorf("mount through a %v delay: %w", oneWay, err))
				}
				r, s, w, err := measureMount(mnt, paths, latencyTree)
				unmount()
				if err != nil {
					fail(fmt.Errorf("through a %v delay: %w", oneWay, err))
				}
				t[j].read, t[j].stat, t[j].walk = append(t[j].read, r), append(t[j].stat, s), append(t[j].walk, w)
			}
		}
		stopSSH()
		fmt.Printf("the same behind %v of added round trip (a user-space delaying relay on loopback, both alike; %d MB, %d files, %d runs each):\n\n",
			2*oneWay, latencyTree.big>>20, latencyTree.dirs*latencyTree.perDir, runs)
		mountRow(fmt.Sprintf("read %d MB file", latencyTree.big>>20), t[0].read, t[1].read)
		mountRow(fmt.Sprintf("stat %d files", latencyTree.dirs*latencyTree.perDir), t[0].stat, t[1].stat)
		mountRow("walk: readdir + lstat", t[0].walk, t[1].walk)
		fmt.Println()
	}
}
