package daemonless

import (
	"context"
	"fmt"
	"io"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
)

// openRoot opens the container's root filesystem as its init sees it
// (/proc/<pid>/root, its mounts included) while it runs.
func (c *Core) openRoot(ctx context.Context, id string) (*rootfs.Root, error) {
	_, pid, err := c.Running(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("copy: %w (cornus copies through a running container)", err)
	}
	return rootfs.Open(fmt.Sprintf("/proc/%d/root", pid))
}

// StatPath describes a file in the container (a final link itself).
func (c *Core) StatPath(ctx context.Context, id, path string) (backends.PathStat, error) {
	root, err := c.openRoot(ctx, id)
	if err != nil {
		return backends.PathStat{}, err
	}
	defer root.Close()
	st, err := root.Lstat(path)
	if err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return backends.PathStat{Name: st.Name, Size: st.Size, Mode: uint32(st.Mode), Mtime: st.Mtime, LinkTarget: st.LinkTarget}, nil
}

// CopyFrom returns a tar of path.
func (c *Core) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, backends.PathStat, error) {
	ps, err := c.StatPath(ctx, id, path)
	if err != nil {
		return nil, ps, err
	}
	root, err := c.openRoot(ctx, id)
	if err != nil {
		return nil, ps, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer root.Close()
		pw.CloseWithError(root.Archive(path, pw))
	}()
	return pr, ps, nil
}

// CopyTo extracts a tar into dir in the container.
func (c *Core) CopyTo(ctx context.Context, id, dir string, r io.Reader) error {
	root, err := c.openRoot(ctx, id)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Extract(dir, r)
}
