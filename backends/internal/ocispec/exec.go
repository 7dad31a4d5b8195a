package ocispec

import (
	"fmt"

	"github.com/containerd/containerd/v2/pkg/cap"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// PrivilegedExec makes an exec's process (a copy of the container's) a
// privileged one, as docker exec --privileged does: the capabilities a
// privileged container gets here (every one this process holds), no
// no_new_privs, and no AppArmor or SELinux confinement of its own. The
// container's seccomp filter stays: it cannot change for one process.
func PrivilegedExec(p *specs.Process) error {
	caps, err := cap.Current()
	if err != nil {
		return fmt.Errorf("privileged exec: the capabilities to grant: %w", err)
	}
	p.Capabilities = &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}
	p.NoNewPrivileges = false
	p.ApparmorProfile, p.SelinuxLabel = "", ""
	return nil
}
