package dockerhost

import (
	"context"
	"slices"
	"time"

	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// InspectImage returns a local image, or an errdefs.NotFound error.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	res, err := b.cli.ImageInspect(ctx, ref)
	if err != nil {
		return backends.Image{}, wrap(err, "inspect image %s", ref)
	}
	return imageDetails(res.InspectResponse), nil
}

func imageDetails(r image.InspectResponse) backends.Image {
	img := backends.Image{
		ID: r.ID, Tags: r.RepoTags, Digests: r.RepoDigests, Size: r.Size,
		Created: parseTime(r.Created), Architecture: r.Architecture, OS: r.Os,
	}
	img.LastTagged = r.Metadata.LastTagTime
	if c := r.Config; c != nil {
		img.Entrypoint = c.Entrypoint
		img.Cmd = c.Cmd
		img.Env = c.Env
		img.WorkingDir = c.WorkingDir
		img.User = c.User
		img.Labels = c.Labels
		img.Healthcheck = specHealthcheck(c.Healthcheck)
		for p := range c.ExposedPorts {
			img.ExposedPorts = append(img.ExposedPorts, p)
		}
		slices.Sort(img.ExposedPorts)
	}
	return img
}

// ListImages returns every local image (untagged ones without tags).
func (b *Backend) ListImages(ctx context.Context) ([]backends.Image, error) {
	res, err := b.cli.ImageList(ctx, client.ImageListOptions{})
	if err != nil {
		return nil, wrap(err, "list images")
	}
	out := make([]backends.Image, 0, len(res.Items))
	for _, s := range res.Items {
		out = append(out, backends.Image{
			ID:      s.ID,
			Tags:    slices.DeleteFunc(slices.Clone(s.RepoTags), func(t string) bool { return t == "<none>:<none>" }),
			Digests: slices.DeleteFunc(slices.Clone(s.RepoDigests), func(d string) bool { return d == "<none>@<none>" }),
			Size:    s.Size,
			Created: time.Unix(s.Created, 0),
			Labels:  s.Labels,
		})
	}
	return out, nil
}

// RemoveImage untags and deletes an image (and its untagged parents).
func (b *Backend) RemoveImage(ctx context.Context, ref string, force bool) error {
	_, err := b.cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: force, PruneChildren: true})
	return wrap(err, "remove image %s", ref)
}
