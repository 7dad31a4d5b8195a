package containerd

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

// Volumes are the local driver's, kept by backends/internal/localstore
// under <data>/volumes.

// EnsureVolume returns the volume labelled for (project, key) or named so,
// creating it if missing.
func (b *Backend) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	return b.vols.Ensure(ctx, v)
}

// ListVolumes lists volumes whose labels match.
func (b *Backend) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	return b.vols.List(ctx, o)
}

// RemoveVolume removes a volume no container uses (force: even then).
func (b *Backend) RemoveVolume(ctx context.Context, name string, force bool) error {
	return b.vols.Remove(ctx, name, force)
}

// volumeUser names a container that mounts the volume, or "".
func (b *Backend) volumeUser(ctx context.Context, name string) (string, error) {
	all, err := b.store().All(ctx)
	if err != nil {
		return "", err
	}
	for _, s := range all {
		for _, m := range s.Mounts {
			if m.Type == "volume" && m.Name == name {
				return s.Name, nil
			}
		}
	}
	return "", nil
}
