package main

// The mounts bench (issue 12): a client-local mount's two ends
// (the export's 9P over loopback TCP to a FUSE mount of a 9P client)
// against sshfs to a private sshd (scripts/sshfs.sh) over loopback, on the
// same tree in the same run, and the same export carried as cornus serve
// carries it (a yamux stream over a WebSocket). Every run mounts each
// afresh, so caches start cold; runs rotate which goes first.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
	mountfuse "github.com/cornus-dev/cornus/caretaker/mount/fuse"
	"golang.org/x/sys/unix"
)

// readSize is the read(2) size for the big file.
const readSize = 1 << 20

// shape is a bench tree's: the big file read through each mount, and the
// small files, dirs × perDir.
type shape struct {
	big          int64
	dirs, perDir int
}

// fullTree is the loopback rows' tree.
var fullTree = shape{big: 100 << 20, dirs: 100, perDir: 100}

// mountRows prints the mounts comparison.
func mountRows(runs int) {
	runs = max(runs, 5)
	dir, err := os.MkdirTemp("", "cornus-bench-mounts-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	tree := filepath.Join(dir, "tree")
	paths, err := makeTree(tree, fullTree)
	if err != nil {
		fail(fmt.Errorf("mounts tree: %w", err))
	}
	port, key := sshfsServer()
	tools := []struct {
		name  string
		mount func(mnt string) (unmount func(), err error)
	}{
		{"cornus", func(mnt string) (func(), error) { return cornusMount(tree, mnt, export.Options{}) }},
		{"sshfs", func(mnt string) (func(), error) { return sshfsMount(tree, mnt, port, key) }},
		{"session", func(mnt string) (func(), error) { return sessionMount(tree, mnt) }},
		{"portable", func(mnt string) (func(), error) { return cornusMount(tree, mnt, export.Options{Portable: true}) }},
	}
	var t [4]struct{ read, stat, walk []time.Duration }
	for i := range runs {
		for k := range tools {
			j := (i + k) % len(tools)
			mnt := filepath.Join(dir, fmt.Sprintf("mnt-%s-%d", tools[j].name, i))
			if err := os.Mkdir(mnt, 0o755); err != nil {
				fail(err)
			}
			unmount, err := tools[j].mount(mnt)
			if err != nil {
				fail(fmt.Errorf("%s mount: %w", tools[j].name, err))
			}
			r, s, w, err := measureMount(mnt, paths, fullTree)
			unmount()
			if err != nil {
				fail(fmt.Errorf("%s: %w", tools[j].name, err))
			}
			t[j].read, t[j].stat, t[j].walk = append(t[j].read, r), append(t[j].stat, s), append(t[j].walk, w)
		}
	}
	fmt.Printf("client-local mounts: cornus (9P export over loopback TCP to a FUSE mount, both in this process) vs sshfs %s (private sshd on 127.0.0.1), fresh mounts, %d runs each, medians [min–max]:\n\n", sshfsVersion(), runs)
	mountRow("read 100 MB file", t[0].read, t[1].read)
	mountRow(fmt.Sprintf("stat %dk files", fullTree.dirs*fullTree.perDir/1000), t[0].stat, t[1].stat)
	mountRow("walk: readdir + lstat", t[0].walk, t[1].walk)
	fmt.Printf("  %-22s (walk: the tree listed and every entry lstat'ed, as find or git status do)\n\n", "")
	fmt.Printf("the same through a session stream (yamux over an upgraded connection on loopback, as cornus serve carries a client-local mount) vs sshfs:\n\n")
	mountRow("read 100 MB file", t[2].read, t[1].read)
	mountRow(fmt.Sprintf("stat %dk files", fullTree.dirs*fullTree.perDir/1000), t[2].stat, t[1].stat)
	mountRow("walk: readdir + lstat", t[2].walk, t[1].walk)
	fmt.Printf("\nthe export's portable confinement (os.Root walks, as on macOS and Windows) vs its openat2 one (Linux), same mount (issue 27):\n\n")
	for _, r := range []struct {
		name       string
		port, base []time.Duration
	}{{"read 100 MB file", t[3].read, t[0].read}, {fmt.Sprintf("stat %dk files", fullTree.dirs*fullTree.perDir/1000), t[3].stat, t[0].stat}, {"walk: readdir + lstat", t[3].walk, t[0].walk}} {
		mp, mb := median(r.port), median(r.base)
		ratio := float64(mp) / float64(mb)
		fmt.Printf("  %-22s portable %8.1f ms %s   openat2 %8.1f ms %s   ratio %.2fx (target <= 1.3x: %s)\n",
			r.name, ms(mp), spread(r.port), ms(mb), spread(r.base), ratio, verdict(ratio, 1.3))
	}
	fmt.Println()
	latencyRows(runs)
}

func mountRow(name string, c, s []time.Duration) {
	mc, msh := median(c), median(s)
	ratio := float64(mc) / float64(msh)
	fmt.Printf("  %-22s cornus %8.1f ms %s   sshfs %8.1f ms %s   ratio %.2fx (target < 1.0x: %s)\n",
		name, ms(mc), spread(c), ms(msh), spread(s), ratio, verdict(ratio, 0.999))
}

// makeTree writes the big file (incompressible) and the small files, and
// returns the small files' paths relative to root.
func makeTree(root string, sh shape) ([]string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(root, "big"))
	if err != nil {
		return nil, err
	}
	rng := rand.NewChaCha8([32]byte{1})
	if _, err := io.CopyN(f, rng, sh.big); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	// Two copies of the small files, so the walk starts as cold as the
	// stats did.
	var paths []string
	for _, top := range []string{"stat", "walk"} {
		for d := range sh.dirs {
			dir := filepath.Join(top, fmt.Sprintf("d%03d", d))
			if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
				return nil, err
			}
			for i := range sh.perDir {
				p := filepath.Join(dir, fmt.Sprintf("f%03d.go", i))
				if err := os.WriteFile(filepath.Join(root, p), []byte("package p\n"), 0o644); err != nil {
					return nil, err
				}
				if top == "stat" {
					paths = append(paths, p)
				}
			}
		}
	}
	return paths, nil
}

// measureMount reads the big file, stats every file of one copy of the
// small files by path (in order, one at a time, as make or a compiler
// checking mtimes does), then walks the other copy.
func measureMount(mnt string, paths []string, sh shape) (read, stat, walk time.Duration, err error) {
	start := time.Now()
	n, err := readAll(filepath.Join(mnt, "big"))
	if err != nil {
		return 0, 0, 0, err
	}
	if n != sh.big {
		return 0, 0, 0, fmt.Errorf("read %d bytes of big, want %d", n, sh.big)
	}
	read = time.Since(start)

	start = time.Now()
	var st unix.Stat_t
	for _, p := range paths {
		if err := unix.Lstat(filepath.Join(mnt, p), &st); err != nil {
			return 0, 0, 0, fmt.Errorf("lstat %s: %w", p, err)
		}
	}
	stat = time.Since(start)

	start = time.Now()
	n2, err := walkTree(filepath.Join(mnt, "walk"))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("walk: %w", err)
	}
	if want := 1 + sh.dirs + sh.dirs*sh.perDir; n2 != want {
		return 0, 0, 0, fmt.Errorf("walk saw %d entries, want %d", n2, want)
	}
	walk = time.Since(start)
	return read, stat, walk, nil
}

func readAll(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, readSize)
	var n int64
	for {
		m, err := f.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// walkTree lists every directory and lstats every entry.
func walkTree(root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if _, err := d.Info(); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// cornusMount serves tree over a loopback TCP connection and mounts it,
// both in this process.
func cornusMount(tree, mnt string, eo export.Options) (func(), error) {
	return cornusMountVia(tree, mnt, eo, 0)
}

// cornusMountVia is cornusMount with the connection through a relay that
// delays each direction by oneWay (none when 0).
func cornusMountVia(tree, mnt string, eo export.Options, oneWay time.Duration) (func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		served <- export.Serve(ctx, c, tree, eo)
	}()
	addr, stopRelay := l.Addr().String(), func() {}
	if oneWay > 0 {
		addr, stopRelay = delayed(addr, oneWay)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		cancel()
		stopRelay()
		return nil, err
	}
	m, err := mountfuse.Mount(ctx, conn, mnt, mountfuse.Options{})
	if err != nil {
		cancel()
		stopRelay()
		return nil, err
	}
	return func() {
		if err := m.Unmount(); err != nil {
			fail(fmt.Errorf("cornus unmount: %w", err))
		}
		cancel()
		stopRelay()
		<-served //nolint:errcheck // the export's end after the cancel: its error is moot
	}, nil
}

// sshfsServer starts (or finds) the private sshd and returns its port and
// the client key.
func sshfsServer() (port, key string) {
	out, err := exec.Command("scripts/sshfs.sh").Output()
	if err != nil {
		fail(fmt.Errorf("scripts/sshfs.sh (run from the repository root): %w", err))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "SSHFS_PORT="); ok {
			port = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "SSHFS_KEY="); ok {
			key = v
		}
	}
	if port == "" || key == "" {
		fail(fmt.Errorf("scripts/sshfs.sh printed no SSHFS_PORT/SSHFS_KEY:\n%s", out))
	}
	return port, key
}

func sshfsMount(tree, mnt, port, key string) (func(), error) {
	cmd := exec.Command("sshfs", "-p", port,
		"-o", "IdentityFile="+key+",StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR",
		"root@127.0.0.1:"+tree, mnt)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	return func() {
		if out, err := exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err != nil {
			fail(fmt.Errorf("fusermount3 -u %s: %v: %s", mnt, err, out))
		}
	}, nil
}

func sshfsVersion() string {
	out, _ := exec.Command("sshfs", "--version").CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "SSHFS version "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "(version unknown)"
}
