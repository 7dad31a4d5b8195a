package bare

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/prepare"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
	"github.com/cornus-dev/cornus/spec"
)

// signalNumber turns a resolved signal name into its number.
func signalNumber(name string) (syscall.Signal, bool) {
	if name == "" {
		return 0, false
	}
	n, ok := spec.ParseSignal(name)
	return syscall.Signal(n), ok
}

// seedVolumes copies what the image holds at a volume's target into the
// volume when it is empty (Docker's copy-up), unless noCopy. The
// container's root is mounted (or copied) by now.
func (b *Backend) seedVolumes(id string, cs backends.ContainerSpec, mounts []backends.MountPoint) error {
	root := b.cfg.rootfsDir(id)
	for _, m := range prepare.SeedCandidates(cs, mounts) {
		// Resolved inside the root, so a link in the image cannot point
		// the copy at the host.
		r, err := rootfs.Open(root)
		if err != nil {
			return fmt.Errorf("seed volumes: %w", err)
		}
		st, err := r.Lstat(m.Destination)
		r.Close()
		if err != nil || !st.Mode.IsDir() {
			continue
		}
		src := filepath.Join(root, filepath.Clean("/"+m.Destination))
		if real, err := filepath.EvalSymlinks(src); err != nil || real != src {
			continue // a link on the way: not seeded
		}
		if err := prepare.CopyTree(src, m.Source); err != nil {
			return fmt.Errorf("seed volume %s from the image's %s: %w", m.Name, m.Destination, err)
		}
	}
	return nil
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// notRunning is the Conflict for a verb that needs a running container.
func notRunning(name string) error {
	return fmt.Errorf("container %s is not running: %w", name, errdefs.ErrConflict)
}
