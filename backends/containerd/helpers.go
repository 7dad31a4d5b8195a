package containerd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/prepare"
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
// volume when it is empty (Docker's copy-up), unless noCopy.
func (b *Backend) seedVolumes(ctx context.Context, id string, cs backends.ContainerSpec, mounts []backends.MountPoint) error {
	todo := prepare.SeedCandidates(cs, mounts)
	if len(todo) == 0 {
		return nil
	}
	ms, err := b.cli.SnapshotService(b.cfg.snapshotter).Mounts(ctx, id)
	if err != nil {
		return fmt.Errorf("seed volumes: %w", err)
	}
	return mount.WithReadonlyTempMount(ctx, ms, func(root string) error {
		for _, m := range todo {
			src := filepath.Join(root, filepath.Clean("/"+m.Destination))
			if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
				continue
			}
			if err := prepare.CopyTree(src, m.Source); err != nil {
				return fmt.Errorf("seed volume %s from the image's %s: %w", m.Name, m.Destination, err)
			}
		}
		return nil
	})
}

// notRunning is the Conflict for a verb that needs a running container.
func notRunning(name string) error {
	return fmt.Errorf("container %s is not running: %w", name, errdefs.ErrConflict)
}
