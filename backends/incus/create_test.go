package incus

import (
	"testing"

	"github.com/containerd/errdefs"
)

// TestSecurityOpts: the options an Incus container cannot honor (podman's
// unmask=, which made /proc/sys writable there, a custom seccomp profile,
// anything unknown) are refused, not silently dropped (security round 2).
func TestSecurityOpts(t *testing.T) {
	for _, c := range []struct {
		opt  string
		nnp  bool
		fail func(error) bool
	}{
		{opt: "no-new-privileges", nnp: true},
		{opt: "no-new-privileges:true", nnp: true},
		{opt: "no-new-privileges=false"},
		{opt: "seccomp=unconfined"},
		{opt: "apparmor=unconfined"},
		{opt: "label=disable"},
		{opt: "no-new-privileges=maybe", fail: errdefs.IsInvalidArgument},
		{opt: "unmask=ALL", fail: errdefs.IsNotImplemented},
		{opt: "unmask=/proc/sys", fail: errdefs.IsNotImplemented},
		{opt: "mask=/proc/acpi", fail: errdefs.IsNotImplemented},
		{opt: "seccomp=/etc/profile.json", fail: errdefs.IsNotImplemented},
		{opt: "future-knob=on", fail: errdefs.IsNotImplemented},
	} {
		var proc procConfig
		err := securityOpts([]string{c.opt}, &proc)
		switch {
		case c.fail == nil && err != nil:
			t.Errorf("%s: %v", c.opt, err)
		case c.fail != nil && !c.fail(err):
			t.Errorf("%s: wrong refusal: %v", c.opt, err)
		case proc.NoNewPrivs != c.nnp:
			t.Errorf("%s: no-new-privileges %v", c.opt, proc.NoNewPrivs)
		}
	}
}
