package dockerhost

import (
	"context"
	"io"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// CopyFrom returns a tar of path (docker cp semantics: a directory's tar
// holds the directory itself) and the stat of path.
func (b *Backend) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, backends.PathStat, error) {
	res, err := b.cli.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: path})
	if err != nil {
		return nil, backends.PathStat{}, wrap(err, "copy %s from container %s", path, id)
	}
	return res.Content, pathStat(res.Stat), nil
}

// CopyTo extracts a tar into the directory dir; a non-directory is never
// replaced by a directory or the reverse.
func (b *Backend) CopyTo(ctx context.Context, id, dir string, tar io.Reader) error {
	_, err := b.cli.CopyToContainer(ctx, id, client.CopyToContainerOptions{DestinationPath: dir, Content: tar})
	return wrap(err, "copy to %s in container %s", dir, id)
}

// StatPath describes a path in the container.
func (b *Backend) StatPath(ctx context.Context, id, path string) (backends.PathStat, error) {
	res, err := b.cli.ContainerStatPath(ctx, id, client.ContainerStatPathOptions{Path: path})
	if err != nil {
		return backends.PathStat{}, wrap(err, "stat %s in container %s", path, id)
	}
	return pathStat(res.Stat), nil
}

func pathStat(s container.PathStat) backends.PathStat {
	return backends.PathStat{Name: s.Name, Size: s.Size, Mode: uint32(s.Mode), Mtime: s.Mtime, LinkTarget: s.LinkTarget}
}
