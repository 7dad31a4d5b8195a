package cni

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Locks down netns pins: create is idempotent, lo comes up, a stale pin
// (after a reboot) is listed as not live and reused, remove is idempotent.
func TestRealNetnsPins(t *testing.T) {
	m := realManager(t)
	id := "ns-" + suffix(t)
	t.Cleanup(func() { _ = m.RemoveNetns(bg(), id) })
	p1, err := m.CreateNetns(bg(), id)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := m.CreateNetns(bg(), id)
	if err != nil || p2 != p1 {
		t.Fatalf("second CreateNetns = %s, %v; want %s", p2, err, p1)
	}
	if pins, _ := m.ListNetns(bg()); !slices.Equal(pins, []NetnsPin{{ID: id, Path: p1, Live: true}}) {
		t.Fatalf("ListNetns = %+v", pins)
	}
	// lo is up: a loopback connection works inside.
	inNetns(t, p1, func() error {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			return err
		}
		defer c.Close()
		a, err := ln.Accept()
		if err == nil {
			a.Close()
		}
		return err
	})
	if hostMounts(t, p1) != 1 {
		t.Fatalf("want exactly one mount on %s", p1)
	}
	for range 2 {
		if err := m.RemoveNetns(bg(), id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(p1); !os.IsNotExist(err) {
		t.Fatalf("pin still there: %v", err)
	}
	// A pin file without its mount, as after a reboot.
	if err := os.WriteFile(p1, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if pins, _ := m.ListNetns(bg()); len(pins) != 1 || pins[0].Live {
		t.Fatalf("stale pin listed as %+v, want not live", pins)
	}
	if err := Do(p1, func() error { return nil }); err == nil {
		t.Fatal("Do entered a plain file")
	}
	if _, err := m.CreateNetns(bg(), id); err != nil || !isNetns(p1) {
		t.Fatalf("CreateNetns over a stale pin: %v", err)
	}
	if _, err := m.CreateNetns(bg(), "../escape"); err == nil {
		t.Fatal("CreateNetns took a path as ID")
	}
	if _, err := os.Stat(filepath.Join(m.dataDir, "escape")); err == nil {
		t.Fatal("CreateNetns wrote outside its dir")
	}
}

// hostMounts counts mounts at p in our mount table.
func hostMounts(t *testing.T, p string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == p {
			n++
		}
	}
	return n
}
