package dockerhost

import (
	"context"
	"maps"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// labelInherited lists the anonymous volumes a container inherited from
// the one it replaced: dockerd counts a volume mounted by name as named,
// so Remove with Volumes removes these itself.
const labelInherited = "cornus.inherited-volumes"

// AnonymousVolumes maps the target of each anonymous volume of the
// container to its name: the volumes dockerd made for it (a mount with no
// source, an image VOLUME) and those it inherited.
func (b *Backend) AnonymousVolumes(ctx context.Context, id string) (map[string]string, error) {
	res, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, wrap(err, "inspect container %s", id)
	}
	r := res.Container
	inherited := map[string]bool{}
	var labels map[string]string
	if r.Config != nil {
		labels = r.Config.Labels
	}
	for _, n := range strings.Split(labels[labelInherited], ",") {
		inherited[n] = n != ""
	}
	named := map[string]bool{} // targets of volumes mounted by name
	if r.HostConfig != nil {
		for _, m := range r.HostConfig.Mounts {
			if m.Type == mount.TypeVolume && m.Source != "" && !inherited[m.Source] {
				named[m.Target] = true
			}
		}
		for _, bind := range r.HostConfig.Binds {
			if src, rest, ok := strings.Cut(bind, ":"); ok && !strings.HasPrefix(src, "/") {
				dst, _, _ := strings.Cut(rest, ":")
				named[dst] = true
			}
		}
	}
	out := map[string]string{}
	for _, m := range r.Mounts {
		if m.Type == mount.TypeVolume && m.Name != "" && (inherited[m.Name] || !named[m.Destination]) {
			out[m.Destination] = m.Name
		}
	}
	return out, nil
}

// withInheritedLabel labels cs with the volumes it inherits.
func withInheritedLabel(cs backends.ContainerSpec) backends.ContainerSpec {
	names := backends.InheritedNames(cs)
	if len(names) == 0 {
		return cs
	}
	cs.Labels = maps.Clone(cs.Labels)
	if cs.Labels == nil {
		cs.Labels = map[string]string{}
	}
	cs.Labels[labelInherited] = strings.Join(names, ",")
	return cs
}

// removeInherited removes the volumes a removed container inherited
// (labels: its labels); one another container uses now stays.
func (b *Backend) removeInherited(ctx context.Context, labels map[string]string) error {
	for _, n := range strings.Split(labels[labelInherited], ",") {
		if n == "" {
			continue
		}
		if err := b.RemoveVolume(ctx, n, false); err != nil && !errdefs.IsNotFound(err) && !errdefs.IsConflict(err) {
			return err
		}
	}
	return nil
}
