package podman

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

func volumePath(name string) string { return "/volumes/" + url.PathEscape(name) }

// EnsureVolume returns the volume labelled for (project, key), creating
// it if missing. External volumes must exist. Podman volume names are
// unique: a concurrent creator's volume is found by name.
func (b *Backend) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	name := v.RuntimeName()
	if v.Volume.External {
		r, err := b.inspectVolume(ctx, name)
		if errdefs.IsNotFound(err) {
			return backends.Volume{}, fmt.Errorf("volume %s is declared external but does not exist; create it first (podman volume create %s): %w", name, name, errdefs.ErrNotFound)
		}
		if err != nil {
			return backends.Volume{}, err
		}
		return volumeOf(r), nil
	}
	b.ensureMu.Lock()
	defer b.ensureMu.Unlock()

	identity := map[string]string{backends.ComposeProject: v.Project, backends.ComposeVolume: v.Key}
	found, err := b.listVolumes(ctx, identity)
	if err != nil {
		return backends.Volume{}, fmt.Errorf("ensure volume %s: %w", name, err)
	}
	if len(found) > 0 {
		// Prefer the one with the expected name (the key's name may have
		// changed since).
		i := slices.IndexFunc(found, func(x volumeResource) bool { return x.Name == name })
		return volumeOf(found[max(i, 0)]), nil
	}
	if existing, err := b.adoptVolume(ctx, name, v.Project); err == nil || !errdefs.IsNotFound(err) {
		return existing, err
	}
	labels := map[string]string{}
	maps.Copy(labels, v.Volume.Labels)
	maps.Copy(labels, v.Labels)
	maps.Copy(labels, identity)
	labels[backends.LabelProject], labels[backends.LabelVolume] = v.Project, v.Key
	body := volumeResource{Name: name, Driver: cmp.Or(v.Volume.Driver, "local"), Options: maps.Clone(v.Volume.DriverOpts), Label: labels}
	var created volumeResource
	if err := b.cli.call(ctx, request{method: "POST", path: "/volumes/create", body: body}, &created); err != nil {
		if errdefs.IsConflict(err) || strings.Contains(err.Error(), "already exists") {
			return b.adoptVolume(ctx, name, v.Project) // made meanwhile by another process
		}
		return backends.Volume{}, fmt.Errorf("create volume %s: %w", name, err)
	}
	return volumeOf(created), nil
}

// adoptVolume returns the existing volume name unless it belongs to
// another project (an unlabelled volume is used as it is, as Compose
// does).
func (b *Backend) adoptVolume(ctx context.Context, name, project string) (backends.Volume, error) {
	r, err := b.inspectVolume(ctx, name)
	if err != nil {
		return backends.Volume{}, err
	}
	if p := r.Labels[backends.ComposeProject]; p != "" && p != project {
		return backends.Volume{}, fmt.Errorf("volume %s already exists and belongs to project %s, not %s: %w", name, p, project, errdefs.ErrConflict)
	}
	return volumeOf(r), nil
}

// ensureNamedVolume returns the volume name, creating a plain local one if
// missing (as podman does for a container's undeclared named volume).
func (b *Backend) ensureNamedVolume(ctx context.Context, name string) (volumeResource, error) {
	r, err := b.inspectVolume(ctx, name)
	if !errdefs.IsNotFound(err) {
		return r, err
	}
	var created volumeResource
	if err := b.cli.call(ctx, request{method: "POST", path: "/volumes/create", body: volumeResource{Name: name, Driver: "local"}}, &created); err != nil {
		if errdefs.IsConflict(err) || strings.Contains(err.Error(), "already exists") {
			return b.inspectVolume(ctx, name)
		}
		return created, fmt.Errorf("create volume %s: %w", name, err)
	}
	return created, nil
}

func (b *Backend) inspectVolume(ctx context.Context, name string) (volumeResource, error) {
	var r volumeResource
	if err := b.cli.call(ctx, request{method: "GET", path: volumePath(name) + "/json"}, &r); err != nil {
		return r, fmt.Errorf("inspect volume %s: %w", name, err)
	}
	return r, nil
}

func (b *Backend) listVolumes(ctx context.Context, labels map[string]string) ([]volumeResource, error) {
	q := url.Values{}
	if len(labels) > 0 {
		q.Set("filters", filters(map[string][]string{"label": labelFilters(labels)}))
	}
	var list []volumeResource
	err := b.cli.call(ctx, request{method: "GET", path: "/volumes/json", query: q}, &list)
	// Podman 4.3 fails the whole list with "no such volume" (404) when a
	// volume it listed is removed before it read it: a race with any
	// concurrent down, seen in CI. A list is a snapshot: ask again.
	for try := 1; errdefs.IsNotFound(err) && try <= 5; try++ {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("list volumes: %w", err)
		case <-time.After(time.Duration(try) * 10 * time.Millisecond):
		}
		list = nil
		err = b.cli.call(ctx, request{method: "GET", path: "/volumes/json", query: q}, &list)
	}
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	// Podman 4.3 matches a volume that has any of several label filters:
	// every one must match.
	return slices.DeleteFunc(list, func(v volumeResource) bool { return !backends.MatchLabels(v.Labels, labels) }), nil
}

func volumeOf(r volumeResource) backends.Volume {
	return backends.Volume{
		Name: r.Name, Driver: r.Driver, Mountpoint: r.Mountpoint, Labels: r.Labels, Options: r.Options, Created: realTime(r.CreatedAt),
	}
}

// ListVolumes returns the volumes whose labels match.
func (b *Backend) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	list, err := b.listVolumes(ctx, o.Labels)
	if err != nil {
		return nil, err
	}
	out := make([]backends.Volume, 0, len(list))
	for _, r := range list {
		out = append(out, volumeOf(r))
	}
	slices.SortFunc(out, func(a, b backends.Volume) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// RemoveVolume deletes a volume; a volume in use is a Conflict. force is
// not passed on: podman's force also removes the containers using the
// volume, which Docker's never does.
func (b *Backend) RemoveVolume(ctx context.Context, name string, force bool) error {
	_ = force
	if err := b.cli.call(ctx, request{method: "DELETE", path: volumePath(name)}, nil); err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	return nil
}
