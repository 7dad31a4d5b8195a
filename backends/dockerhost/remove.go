package dockerhost

import (
	"context"

	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Remove deletes a container; Force kills it first, Volumes removes its
// anonymous volumes.
func (b *Backend) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	_, err := b.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: o.Force, RemoveVolumes: o.Volumes})
	return wrap(err, "remove container %s", id)
}
