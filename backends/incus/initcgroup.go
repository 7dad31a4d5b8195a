package incus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// mountCgroups gives the container its /sys/fs/cgroup, as a container
// engine does: LXC ignores lxc.mount.auto's cgroup request when the
// container has a cgroup namespace (it expects the init, usually systemd,
// to mount them), and cornus's init is that init. Each hierarchy of
// /proc/self/cgroup is mounted at its usual place (v1 controllers under
// /sys/fs/cgroup/<name>, the unified one at /sys/fs/cgroup/unified on a
// hybrid host or /sys/fs/cgroup itself on a pure v2 one), read-only
// unless the container is privileged (Docker's rule). The namespace makes
// each one's root the container's own cgroup, so memory.limit_in_bytes
// and the like show the container's limits.
func mountCgroups(readOnly bool) error {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	var v1 []string
	unified := false
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			unified = true
		} else if f[1] != "" {
			v1 = append(v1, f[1])
		}
	}
	const root = "/sys/fs/cgroup"
	var flags uintptr = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	if len(v1) == 0 {
		if !unified {
			return nil
		}
		if err := unix.Mount("cgroup2", root, "cgroup2", flags, ""); err != nil {
			return fmt.Errorf("mount cgroup2 on %s: %w", root, err)
		}
		return nil
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=755"); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", root, err)
	}
	for _, ctrl := range v1 {
		dir, opts := ctrl, ctrl
		if name, ok := strings.CutPrefix(ctrl, "name="); ok {
			dir, opts = name, "none,"+ctrl
		}
		target := filepath.Join(root, dir)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("cgroups: %w", err)
		}
		if err := unix.Mount("cgroup", target, "cgroup", flags, opts); err != nil {
			return fmt.Errorf("mount cgroup %s on %s: %w", ctrl, target, err)
		}
	}
	if unified {
		target := filepath.Join(root, "unified")
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("cgroups: %w", err)
		}
		if err := unix.Mount("cgroup2", target, "cgroup2", flags, ""); err != nil {
			return fmt.Errorf("mount cgroup2 on %s: %w", target, err)
		}
	}
	if readOnly {
		if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("remount %s read-only: %w", root, err)
		}
	}
	return nil
}
