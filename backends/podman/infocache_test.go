package podman

import (
	"net"
	"path/filepath"
	"testing"
)

// Locks down the kept service facts: reused while the same socket file
// answers, dropped once the service made a new one; never kept for a
// private service.
func TestInfoCache(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "p.sock")
	listen := func() net.Listener {
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := listen()
	ep := endpoint{network: "unix", address: sock}
	b := &Backend{cfg: config{environ: []string{"CORNUS_STATE_DIR=" + dir}}, cli: newClient(func() endpoint { return ep })}
	if _, ok := b.cachedInfo(); ok {
		t.Fatal("facts before any were kept")
	}
	var info hostInfo
	info.Host.CgroupManager, info.Host.Security.Rootless = "cgroupfs", true
	b.keepInfo(info)
	got, ok := b.cachedInfo()
	if !ok || got.Host.CgroupManager != "cgroupfs" || !got.Host.Security.Rootless {
		t.Fatalf("kept facts: %+v %v", got, ok)
	}
	l.Close() // a restarted service makes a new socket file
	l = listen()
	defer l.Close()
	if _, ok := b.cachedInfo(); ok {
		t.Fatal("facts of the previous service reused")
	}
	b.svc = &service{}
	b.keepInfo(info)
	if _, ok := b.cachedInfo(); ok {
		t.Fatal("facts kept for a private service")
	}
}
