package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Copies are tar streams over exec, as kubectl cp does (the image needs
// tar; a stat needs stat): they happen inside the container, so a link the
// container planted resolves in the container's filesystem, never the
// node's.

// CopyFrom returns a tar of path (a directory's tar holds the directory
// itself) and the stat of path.
func (b *Backend) CopyFrom(ctx context.Context, id, p string) (io.ReadCloser, backends.PathStat, error) {
	c, err := b.find(ctx, id)
	if err != nil {
		return nil, backends.PathStat{}, err
	}
	st, err := b.stat(ctx, c, p)
	if err != nil {
		return nil, backends.PathStat{}, err
	}
	dir, base := path.Split(path.Clean(p))
	if dir == "" {
		dir = "/"
	}
	if base == "" || base == "/" {
		dir, base = "/", "."
	}
	pr, pw := io.Pipe()
	go func() {
		var stderr bytes.Buffer
		code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: []string{"tar", "-c", "-f", "-", "-C", dir, base}, Stdout: pw, Stderr: &stderr})
		if err == nil && code != 0 {
			err = fmt.Errorf("copy %s from %s: tar exited %d: %s: %w", p, c.rec.Name, code, strings.TrimSpace(stderr.String()), errdefs.ErrUnknown)
		}
		pw.CloseWithError(err)
	}()
	return pr, st, nil
}

// CopyTo extracts a tar into the directory dir.
func (b *Backend) CopyTo(ctx context.Context, id, dir string, tar io.Reader) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: []string{"tar", "-x", "-f", "-", "-C", dir}, Stdin: tar, Stdout: &out, Stderr: &out})
	if err != nil {
		return fmt.Errorf("copy to %s in %s: %w", dir, c.rec.Name, err)
	}
	if code != 0 {
		var class error = errdefs.ErrUnknown
		if strings.Contains(out.String(), "No such file") || strings.Contains(out.String(), "not found") {
			class = errdefs.ErrNotFound
		}
		return fmt.Errorf("copy to %s in %s: tar exited %d: %s: %w", dir, c.rec.Name, code, strings.TrimSpace(out.String()), class)
	}
	return nil
}

// StatPath describes a path in the container (lstat: a link is itself).
func (b *Backend) StatPath(ctx context.Context, id, p string) (backends.PathStat, error) {
	c, err := b.find(ctx, id)
	if err != nil {
		return backends.PathStat{}, err
	}
	return b.stat(ctx, c, p)
}

func (b *Backend) stat(ctx context.Context, c container, p string) (backends.PathStat, error) {
	var out, errb bytes.Buffer
	code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: []string{"stat", "-c", "%s|%f|%Y", p}, Stdout: &out, Stderr: &errb})
	if err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s in %s: %w", p, c.rec.Name, err)
	}
	if code != 0 {
		msg := strings.TrimSpace(errb.String())
		if strings.Contains(msg, "No such file") || strings.Contains(msg, "can't stat") || strings.Contains(msg, "cannot stat") {
			return backends.PathStat{}, fmt.Errorf("stat %s in %s: no such file or directory: %w", p, c.rec.Name, errdefs.ErrNotFound)
		}
		return backends.PathStat{}, fmt.Errorf("stat %s in %s: %s: %w", p, c.rec.Name, msg, errdefs.ErrUnknown)
	}
	f := strings.Split(strings.TrimSpace(out.String()), "|")
	if len(f) != 3 {
		return backends.PathStat{}, fmt.Errorf("stat %s in %s: unexpected output %q: %w", p, c.rec.Name, out.String(), errdefs.ErrUnknown)
	}
	size, _ := strconv.ParseInt(f[0], 10, 64)
	raw, _ := strconv.ParseUint(f[1], 16, 32)
	mtime, _ := strconv.ParseInt(f[2], 10, 64)
	st := backends.PathStat{Name: path.Base(p), Size: size, Mode: uint32(fileMode(uint32(raw))), Mtime: time.Unix(mtime, 0)}
	if fs.FileMode(st.Mode)&fs.ModeSymlink != 0 {
		out.Reset()
		if code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: []string{"readlink", p}, Stdout: &out, Stderr: io.Discard}); err == nil && code == 0 {
			st.LinkTarget = strings.TrimSpace(out.String())
		}
	}
	return st, nil
}

// fileMode converts a raw st_mode to Go's FileMode bits.
func fileMode(raw uint32) fs.FileMode {
	m := fs.FileMode(raw & 0o777)
	switch raw & 0o170000 {
	case 0o040000:
		m |= fs.ModeDir
	case 0o120000:
		m |= fs.ModeSymlink
	case 0o020000:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case 0o060000:
		m |= fs.ModeDevice
	case 0o010000:
		m |= fs.ModeNamedPipe
	case 0o140000:
		m |= fs.ModeSocket
	}
	if raw&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if raw&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if raw&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}
