package incus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
	"github.com/cornus-dev/cornus/internal/headwriter"
)

// Copies run cornus's helper inside the container (docker cp): it reads
// and writes through the container's own view of its filesystem (its
// volumes and tmpfs mounts included), every path resolved inside the
// container's root, so a link the container planted cannot lead a copy
// to the host. The container must be running.

// StatPath describes a file in the container (a final link itself).
func (b *Backend) StatPath(ctx context.Context, id, path string) (backends.PathStat, error) {
	var out bytes.Buffer
	if err := b.copyHelper(ctx, id, helperRequest{Op: "stat", Path: path}, nil, &out); err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s in container %s: %w", path, id, err)
	}
	var st rootfs.Stat
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s in container %s: %w", path, id, err)
	}
	return backends.PathStat{Name: st.Name, Size: st.Size, Mode: uint32(st.Mode), Mtime: st.Mtime, LinkTarget: st.LinkTarget}, nil
}

// CopyFrom returns a tar of path and the stat of path itself.
func (b *Backend) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, backends.PathStat, error) {
	st, err := b.StatPath(ctx, id, path)
	if err != nil {
		return nil, st, err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(b.copyHelper(ctx, id, helperRequest{Op: "archive", Path: path}, nil, pw))
	}()
	return pr, st, nil
}

// CopyTo extracts a tar into the directory dir.
func (b *Backend) CopyTo(ctx context.Context, id, dir string, tar io.Reader) error {
	if err := b.copyHelper(ctx, id, helperRequest{Op: "extract", Path: dir}, tar, io.Discard); err != nil {
		return fmt.Errorf("copy into %s in container %s: %w", dir, id, err)
	}
	return nil
}

func (b *Backend) copyHelper(ctx context.Context, id string, req helperRequest, stdin io.Reader, stdout io.Writer) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if in.Status != "Running" {
		return fmt.Errorf("the incus backend copies files of running containers only: %w", errdefs.ErrConflict)
	}
	if in.Config[keyDir] == "" {
		return fmt.Errorf("copying files of an OCI container Incus runs itself is not supported: %w", errdefs.ErrNotImplemented)
	}
	var stderr bytes.Buffer
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	code, err := b.runHelper(ctx, in, req, streams{stdin: stdin, stdout: stdout, stderr: &headwriter.Writer{W: &stderr, N: 64 << 10}})
	if err != nil {
		return err
	}
	msg := strings.TrimSpace(stderr.String())
	switch code {
	case 0:
		return nil
	case exitCopyNotFound:
		return fmt.Errorf("%s: %w", msg, errdefs.ErrNotFound)
	case exitCopyInvalid:
		return fmt.Errorf("%s: %w", msg, errdefs.ErrInvalidArgument)
	case exitCopyDenied:
		return fmt.Errorf("%s: %w", msg, errdefs.ErrPermissionDenied)
	}
	return fmt.Errorf("%s (helper exit %d): %w", msg, code, errdefs.ErrUnknown)
}
