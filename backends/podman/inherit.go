package podman

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// AnonymousVolumes maps the target of each anonymous volume of the
// container to its name: those podman made anonymous (an image VOLUME, a
// mount with no name) and those Create made or inherited for it.
func (b *Backend) AnonymousVolumes(ctx context.Context, id string) (map[string]string, error) {
	d, err := b.inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	ours := map[string]bool{}
	for _, n := range strings.Split(d.Config.Labels[labelAnonymousVolumes], ",") {
		ours[n] = n != ""
	}
	out := map[string]string{}
	for _, m := range d.Mounts {
		if m.Type != "volume" || m.Name == "" {
			continue
		}
		anon := ours[m.Name]
		if !anon {
			var v struct{ Anonymous bool }
			if err := b.cli.call(ctx, request{method: "GET", path: "/volumes/" + url.PathEscape(m.Name) + "/json"}, &v); err != nil {
				return nil, fmt.Errorf("volume %s of container %s: %w", m.Name, id, err)
			}
			anon = v.Anonymous
		}
		if anon {
			out[m.Destination] = m.Name
		}
	}
	return out, nil
}
