package filecopy

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// defaultMode is the mode of a secret or config without one (Compose's).
const defaultMode = 0o444

// Archiver is what Copy needs of a backend.
type Archiver interface {
	StatPath(ctx context.Context, id, path string) (backends.PathStat, error)
	CopyTo(ctx context.Context, id, dir string, tar io.Reader) error
}

// Copy writes files into container id.
func Copy(ctx context.Context, a Archiver, id string, files []backends.File) error {
	known := map[string]bool{"/": true}
	exists := func(dir string) (bool, error) {
		if e, ok := known[dir]; ok {
			return e, nil
		}
		_, err := a.StatPath(ctx, id, dir)
		switch {
		case err == nil:
			known[dir] = true
		case errdefs.IsNotFound(err):
			known[dir] = false
		default:
			return false, err
		}
		return known[dir], nil
	}
	data, err := Tar(files, exists, time.Now())
	if err != nil {
		return err
	}
	if err := a.CopyTo(ctx, id, "/", bytes.NewReader(data)); err != nil {
		return fmt.Errorf("copy secrets and configs: %w", err)
	}
	return nil
}

// Tar builds the archive in memory (secrets and configs are small: the
// engine bounds them). exists reports whether a directory is already in
// the container.
func Tar(files []backends.File, exists func(dir string) (bool, error), now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	added := map[string]bool{}
	for _, f := range files {
		target := path.Clean("/" + f.Target)
		if target == "/" {
			return nil, fmt.Errorf("file target %q must name a file: %w", f.Target, errdefs.ErrInvalidArgument)
		}
		var parents []string // outermost first
		for d := path.Dir(target); d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if added[d] {
				continue
			}
			ok, err := exists(d)
			if err != nil {
				return nil, err
			}
			if ok {
				continue
			}
			added[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: now}); err != nil {
				return nil, fmt.Errorf("tar %s: %w", d, err)
			}
		}
		mode := int64(f.Mode & 0o7777)
		if mode == 0 {
			mode = defaultMode
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: strings.TrimPrefix(target, "/"), Mode: mode,
			Size: int64(len(f.Content)), Uid: f.UID, Gid: f.GID, ModTime: now,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar %s: %w", target, err)
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, fmt.Errorf("tar %s: %w", target, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
