package dockerhost

import (
	"context"

	"github.com/moby/moby/client"
)

// Rename renames a container.
func (b *Backend) Rename(ctx context.Context, id, name string) error {
	if _, err := b.cli.ContainerRename(ctx, id, client.ContainerRenameOptions{NewName: name}); err != nil {
		return wrap(err, "rename container %s to %s", id, name)
	}
	return nil
}
