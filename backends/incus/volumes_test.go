package incus

import (
	"context"
	"testing"

	"github.com/containerd/errdefs"
)

// TestHostDisk locks down security round 2's volume finding: the incus
// backend read a tmpfs naming a device (type=tmpfs, device=/dev/X), which
// the policy let through as taking nothing, as that host block device. It
// now reads options as the policy does (hostpolicy.LocalDriverMount).
func TestHostDisk(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		want diskPlan
		ok   bool
	}{
		{map[string]string{"type": "tmpfs", "device": "/dev/vda"}, diskPlan{}, false},
		{map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m"}, diskPlan{}, false},
		{map[string]string{"type": "ext4", "device": "/dev/vda", "o": "ro"}, diskPlan{Source: "/dev/vda", Block: true, MountOptions: "ro"}, true},
		{map[string]string{"Type": "ext4", "Device": "/dev/vdb"}, diskPlan{Source: "/dev/vdb", Block: true}, true},
		{map[string]string{"type": "none", "o": "bind", "device": "/srv/a"}, diskPlan{Source: "/srv/a"}, true},
		{map[string]string{"type": "bind", "device": "/srv/a"}, diskPlan{Source: "/srv/a"}, true},
		{map[string]string{"type": "ext4", "o": "rbind", "device": "/srv/a"}, diskPlan{Source: "/srv/a"}, true},
		{map[string]string{"type": "none", "o": "bind"}, diskPlan{}, false},
		{map[string]string{"type": "nfs", "o": "addr=10.0.0.1", "device": ":/export"}, diskPlan{}, false},
		{map[string]string{"device": "/dev/vda"}, diskPlan{}, false},
	} {
		var d diskPlan
		if ok := hostDisk(&d, c.opts); ok != c.ok || d != c.want {
			t.Errorf("%v: got %+v %v, want %+v %v", c.opts, d, ok, c.want, c.ok)
		}
		if !c.ok && c.opts["type"] != "tmpfs" { // a tmpfs is made: TestTmpfsVolume
			// Nor is it made as an Incus volume: the backend has no form for it.
			_, err := (&Backend{}).createVolume(context.Background(), "v", "", c.opts, nil, "")
			if !errdefs.IsNotImplemented(err) {
				t.Errorf("%v: createVolume: want NotImplemented, got %v", c.opts, err)
			}
		}
	}
}
