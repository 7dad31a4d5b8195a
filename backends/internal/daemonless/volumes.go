package daemonless

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

// Volumes are the local driver's, kept by backends/internal/localstore
// under <data>/volumes.

// EnsureVolume returns the volume labelled for (project, key) or named so,
// creating it if missing.
func (c *Core) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	return c.vols.Ensure(ctx, v)
}

// ListVolumes lists volumes whose labels match.
func (c *Core) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	return c.vols.List(ctx, o)
}

// RemoveVolume removes a volume no container uses (force: even then).
func (c *Core) RemoveVolume(ctx context.Context, name string, force bool) error {
	return c.vols.Remove(ctx, name, force)
}

// volumeUser names a container that mounts the volume, or "".
func (c *Core) volumeUser(ctx context.Context, name string) (string, error) {
	all, err := c.Store().All(ctx)
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
