package dockerhost

import (
	"context"

	"github.com/moby/moby/client"
)

// Pause freezes every process of the container.
func (b *Backend) Pause(ctx context.Context, id string) error {
	_, err := b.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
	return wrap(err, "pause container %s", id)
}

// Unpause thaws a paused container.
func (b *Backend) Unpause(ctx context.Context, id string) error {
	_, err := b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	return wrap(err, "unpause container %s", id)
}
