package builder

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/tonistiigi/fsutil"
	"github.com/tonistiigi/fsutil/types"
)

// maxTarContext bounds a context sent as one tar (a builder that reads no
// session: podman's): past it the build is refused, naming the bound.
const maxTarContext = 8 << 30

// extraFile is a file a tar context carries beside the context's own (a
// Dockerfile from elsewhere, a secret a native builder reads from it).
type extraFile struct {
	name string
	data []byte
}

// writeTarContext writes the (already filtered) context as a tar, then the
// extra files, to w. Symlinks stay links; nothing outside the context is
// read (its FS is an os.Root).
func writeTarContext(ctx context.Context, ctxFS fsutil.FS, extras []extraFile, w io.Writer) error {
	cw := &countingWriter{w: w}
	tw := tar.NewWriter(cw)
	err := ctxFS.Walk(ctx, "", func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		hdr, err := tarHeader(path, entry)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("build context %s: %w", path, err)
		}
		if hdr.Typeflag == tar.TypeReg && hdr.Size > 0 {
			if err := copyFile(ctxFS, path, tw); err != nil {
				return err
			}
		}
		if cw.n > maxTarContext {
			return fmt.Errorf("build context: larger than %d GiB: add what the build does not read to .dockerignore", maxTarContext>>30)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range extras {
		hdr := &tar.Header{Name: f.name, Mode: 0o600, Size: int64(len(f.data)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

func tarHeader(path string, entry fs.DirEntry) (*tar.Header, error) {
	fi, err := entry.Info()
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*types.Stat)
	if !ok {
		return nil, fmt.Errorf("build context %s: no file stat", path)
	}
	hdr, err := tar.FileInfoHeader(fi, st.Linkname)
	if err != nil {
		return nil, fmt.Errorf("build context %s: %w", path, err)
	}
	hdr.Name = filepath.ToSlash(path)
	if fi.IsDir() && !strings.HasSuffix(hdr.Name, "/") {
		hdr.Name += "/"
	}
	hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
	hdr.Uname, hdr.Gname = "", ""
	if st.Linkname != "" {
		hdr.Size = 0
		hdr.Linkname = st.Linkname
		hdr.Typeflag = tar.TypeLink
		if fi.Mode()&fs.ModeSymlink != 0 {
			hdr.Typeflag = tar.TypeSymlink
		}
	}
	return hdr, nil
}

func copyFile(ctxFS fsutil.FS, path string, w io.Writer) error {
	rc, err := ctxFS.Open(path)
	if err != nil {
		return fmt.Errorf("build context %s: %w", path, err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("build context %s: %w", path, err)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
