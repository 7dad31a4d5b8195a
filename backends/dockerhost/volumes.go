package dockerhost

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/volume"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// EnsureVolume returns the volume labelled for (project, key), creating
// it if missing. External volumes must exist. Docker volume names are
// unique and creating an existing name returns it, so concurrent creators
// end up with the same volume.
func (b *Backend) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	name := v.RuntimeName()
	if v.Volume.External {
		res, err := b.cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
		if errdefs.IsNotFound(err) {
			return backends.Volume{}, fmt.Errorf("volume %s is declared external but does not exist; create it first (docker volume create %s): %w", name, name, errdefs.ErrNotFound)
		}
		if err != nil {
			return backends.Volume{}, wrap(err, "inspect external volume %s", name)
		}
		return volumeOf(res.Volume), nil
	}
	b.ensureMu.Lock()
	defer b.ensureMu.Unlock()

	// Found by docker compose's labels, as networks are.
	identity := map[string]string{backends.ComposeProject: v.Project, backends.ComposeVolume: v.Key}
	res, err := b.cli.VolumeList(ctx, client.VolumeListOptions{Filters: labelFilters(identity)})
	if err != nil {
		return backends.Volume{}, wrap(err, "ensure volume %s: list volumes", name)
	}
	if len(res.Items) > 0 {
		// Prefer the one with the expected name (the key's name may have
		// changed since).
		i := slices.IndexFunc(res.Items, func(x volume.Volume) bool { return x.Name == name })
		return volumeOf(res.Items[max(i, 0)]), nil
	}
	existing, err := b.cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
	switch {
	case err == nil:
		if p := existing.Volume.Labels[backends.ComposeProject]; p != "" && p != v.Project {
			return backends.Volume{}, fmt.Errorf("volume %s already exists and belongs to project %s, not %s: %w", name, p, v.Project, errdefs.ErrConflict)
		}
		// An unlabelled volume of that name is used as it is (as Compose does).
		return volumeOf(existing.Volume), nil
	case !errdefs.IsNotFound(err):
		return backends.Volume{}, wrap(err, "inspect volume %s", name)
	}
	labels := map[string]string{}
	maps.Copy(labels, v.Volume.Labels)
	maps.Copy(labels, v.Labels)
	maps.Copy(labels, identity)
	labels[backends.LabelProject], labels[backends.LabelVolume] = v.Project, v.Key
	created, err := b.cli.VolumeCreate(ctx, client.VolumeCreateOptions{
		Name: name, Driver: v.Volume.Driver, DriverOpts: maps.Clone(v.Volume.DriverOpts), Labels: labels,
	})
	if err != nil {
		return backends.Volume{}, wrap(err, "create volume %s", name)
	}
	return volumeOf(created.Volume), nil
}

func volumeOf(v volume.Volume) backends.Volume {
	return backends.Volume{
		Name: v.Name, Driver: v.Driver, Mountpoint: v.Mountpoint,
		Labels: v.Labels, Options: v.Options, Created: parseTime(v.CreatedAt),
	}
}

// ListVolumes returns the volumes whose labels match.
func (b *Backend) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	res, err := b.cli.VolumeList(ctx, client.VolumeListOptions{Filters: labelFilters(o.Labels)})
	if err != nil {
		return nil, wrap(err, "list volumes")
	}
	out := make([]backends.Volume, 0, len(res.Items))
	for _, v := range res.Items {
		out = append(out, volumeOf(v))
	}
	slices.SortFunc(out, func(a, b backends.Volume) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// RemoveVolume deletes a volume; force removes it even if in use records
// are stale.
func (b *Backend) RemoveVolume(ctx context.Context, name string, force bool) error {
	_, err := b.cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{Force: force})
	return wrap(err, "remove volume %s", name)
}
