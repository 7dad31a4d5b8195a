package incus

import (
	"maps"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestUnshiftedDisks: an unprivileged instance's host binds are shifted
// (idmapped), except those whose file system takes no idmapped mount
// (client-local mounts: FUSE, 9p), which go as they are; a plain
// directory is not such a one.
func TestUnshiftedDisks(t *testing.T) {
	dir := t.TempDir()
	if unshiftable(dir) {
		t.Fatalf("%s (a plain directory) taken for FUSE or 9p", dir)
	}
	devs := instanceDevices(plan{Shift: true, Disks: []diskPlan{
		{Source: dir, Path: "/a"},
		{Source: "/srv/fuse", Path: "/b", Unshifted: true},
	}})
	if devs["disk0"]["shift"] != "true" || devs["disk1"]["shift"] != "" {
		t.Fatalf("disk0 shift %q (want true), disk1 shift %q (want none)", devs["disk0"]["shift"], devs["disk1"]["shift"])
	}
}

// TestLoopbackSockets: a port on the app's loopback that a companion
// beside it serves on the host is a proxy device listening in the
// instance and connecting on the host.
func TestLoopbackSockets(t *testing.T) {
	devs := instanceDevices(plan{Spec: backends.ContainerSpec{Loopback: []backends.LoopbackSocket{{Port: 15002, Socket: "/pool/v/aws/endpoint.sock"}}}})
	want := map[string]string{"type": "proxy", "bind": "instance", "listen": "tcp:127.0.0.1:15002", "connect": "unix:/pool/v/aws/endpoint.sock"}
	if !maps.Equal(devs["loopback0"], want) {
		t.Errorf("loopback0: %v, want %v", devs["loopback0"], want)
	}
}
