package dockerhost

import (
	"context"

	"github.com/moby/moby/client"
)

// Start starts a created or stopped container.
func (b *Backend) Start(ctx context.Context, id string) error {
	_, err := b.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return wrap(err, "start container %s", id)
}
