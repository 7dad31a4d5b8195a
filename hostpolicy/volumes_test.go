package hostpolicy

import "testing"

// TestLocalDriverMount locks down the one reading of local-driver options
// the policy and the backends share (security round 2: a tmpfs naming a
// device was mounted as that device by the incus backend).
func TestLocalDriverMount(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		want LocalMount
	}{
		{nil, LocalMount{Kind: MountPlain}},
		{map[string]string{"size": "1g"}, LocalMount{Kind: MountPlain}},
		{map[string]string{"type": "none", "o": "bind", "device": "/srv"}, LocalMount{Kind: MountBind, Device: "/srv", Type: "none", Options: "bind"}},
		{map[string]string{"type": "bind", "device": "/srv"}, LocalMount{Kind: MountBind, Device: "/srv", Type: "bind"}},
		{map[string]string{"type": "ext4", "o": "ro,rbind", "device": "/srv"}, LocalMount{Kind: MountBind, Device: "/srv", Type: "ext4", Options: "ro,rbind"}},
		{map[string]string{"type": "tmpfs", "o": "move", "device": "/mnt"}, LocalMount{Kind: MountBind, Device: "/mnt", Type: "tmpfs", Options: "move"}},
		{map[string]string{"type": "tmpfs", "device": "/dev/vda"}, LocalMount{Kind: MountTmpfs, Device: "/dev/vda", Type: "tmpfs"}},
		{map[string]string{"type": "tmpfs", "o": "size=1m"}, LocalMount{Kind: MountTmpfs, Type: "tmpfs", Options: "size=1m"}},
		{map[string]string{"type": "ext4", "device": "/dev/vda"}, LocalMount{Kind: MountDevice, Device: "/dev/vda", Type: "ext4"}},
		{map[string]string{"device": "/dev/vda"}, LocalMount{Kind: MountDevice, Device: "/dev/vda"}},
		{map[string]string{"type": "nfs", "o": "addr=10.0.0.1"}, LocalMount{Kind: MountDevice, Type: "nfs", Options: "addr=10.0.0.1"}},
		{map[string]string{"TYPE": "ext4", "Device": "/dev/vda"}, LocalMount{Kind: MountDevice, Device: "/dev/vda", Type: "ext4"}},
		{map[string]string{"device": "/dev/a", "Device": "/dev/b", "DEVICE": "/dev/c"}, LocalMount{Kind: MountDevice, Device: "/dev/a"}},
		{map[string]string{"Device": "/dev/b", "DEVICE": "/dev/c"}, LocalMount{Kind: MountDevice, Device: "/dev/c"}},
	} {
		if got := LocalDriverMount(c.opts); got != c.want {
			t.Errorf("%v: got %+v, want %+v", c.opts, got, c.want)
		}
	}
}
