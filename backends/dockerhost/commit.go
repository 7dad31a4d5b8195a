package dockerhost

import (
	"context"
	"io"

	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Export returns a tar of the container's filesystem (docker export).
func (b *Backend) Export(ctx context.Context, id string) (io.ReadCloser, error) {
	rc, err := b.cli.ContainerExport(ctx, id, client.ContainerExportOptions{})
	if err != nil {
		return nil, wrap(err, "export container %s", id)
	}
	return rc, nil
}

// Commit makes an image of the container (docker commit).
func (b *Backend) Commit(ctx context.Context, id string, o backends.CommitOptions) (string, error) {
	res, err := b.cli.ContainerCommit(ctx, id, client.ContainerCommitOptions{
		Reference: o.Reference, Author: o.Author, Comment: o.Message, Changes: o.Changes, NoPause: o.NoPause,
	})
	if err != nil {
		return "", wrap(err, "commit container %s", id)
	}
	return res.ID, nil
}
