package incus

import (
	"testing"
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
