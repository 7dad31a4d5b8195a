package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// defaultFileMode is the mode of a secret or config without one (Compose's).
const defaultFileMode = 0o444

// copyFiles writes secrets and configs into a created container: one tar,
// extracted at "/", holding the files with their owners and modes and the
// parent directories that do not exist yet (existing ones are left alone,
// since extracting a directory entry would change its owner and mode).
func (b *Backend) copyFiles(ctx context.Context, id string, files []backends.File) error {
	known := map[string]bool{"/": true}
	exists := func(dir string) (bool, error) {
		if e, ok := known[dir]; ok {
			return e, nil
		}
		_, err := b.StatPath(ctx, id, dir)
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
	data, err := filesTar(files, exists, time.Now())
	if err != nil {
		return err
	}
	if err := b.CopyTo(ctx, id, "/", bytes.NewReader(data)); err != nil {
		return fmt.Errorf("copy secrets and configs: %w", err)
	}
	return nil
}

// filesTar builds the tar of files in memory (secrets and configs are
// small: the engine bounds them). exists reports whether a directory is
// already in the container.
func filesTar(files []backends.File, exists func(dir string) (bool, error), now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	added := map[string]bool{}
	for _, f := range files {
		target := path.Clean("/" + f.Target)
		if target == "/" {
			return nil, invalid("file target %q must name a file", f.Target)
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
			mode = defaultFileMode
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
