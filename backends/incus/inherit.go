package incus

import (
	"context"
	"strings"
)

// AnonymousVolumes maps the target of each anonymous volume of the
// container (made or inherited for it) to its name.
func (b *Backend) AnonymousVolumes(ctx context.Context, id string) (map[string]string, error) {
	in, err := b.find(ctx, id)
	if err != nil {
		return nil, err
	}
	anon := map[string]bool{}
	for _, n := range strings.Split(in.Config[keyAnonymous], ",") {
		anon[volumeName(n)] = n != ""
	}
	out := map[string]string{}
	for _, d := range in.Devices {
		if d["type"] == "disk" && d["pool"] != "" && anon[d["source"]] {
			out[d["path"]] = d["source"]
		}
	}
	return out, nil
}
