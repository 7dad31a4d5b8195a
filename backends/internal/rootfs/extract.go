package rootfs

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"
)

// Extract unpacks a tar into the existing directory dir. Every entry is
// resolved inside the root again (an earlier entry may have made a link);
// files are created through the directory's descriptor without following
// links. Hard links and devices in the tar are refused.
func (r *Root) Extract(dir string, rd io.Reader) error {
	d, err := r.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	d.Close()
	tr := tar.NewReader(rd)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("extract into %s: %w", dir, err)
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if name == "" {
			continue // the directory itself
		}
		if err := r.extractOne(dir, path.Join("/"+rel(dir), name), hdr, tr); err != nil {
			return fmt.Errorf("extract %s into %s: %w", hdr.Name, dir, err)
		}
	}
}

func (r *Root) extractOne(dir, target string, hdr *tar.Header, body io.Reader) error {
	if err := r.MkdirAll(path.Dir(target), 0o755); err != nil {
		return err
	}
	pd, base, err := r.parent(target)
	if err != nil {
		return err
	}
	defer pd.Close()
	dirfd := int(pd.Fd())
	mode := uint32(hdr.Mode & 0o7777)
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := unix.Mkdirat(dirfd, base, mode); err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
	case tar.TypeReg:
		fd, err := child(dirfd, base, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, mode)
		if err != nil {
			return pathError(target, err)
		}
		f := os.NewFile(uintptr(fd), target)
		_, err = io.Copy(f, body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if err := unix.Fchmodat(dirfd, base, mode, 0); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := unix.Unlinkat(dirfd, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
		if err := unix.Symlinkat(hdr.Linkname, dirfd, base); err != nil {
			return err
		}
	case tar.TypeLink:
		// The link's target is named relative to the archive's root.
		src, err := r.open(path.Join("/"+rel(dir), hdr.Linkname), unix.O_PATH|unix.O_NOFOLLOW)
		if err != nil {
			return err
		}
		err = unix.Linkat(int(src.Fd()), "", dirfd, base, unix.AT_EMPTY_PATH)
		src.Close()
		if err != nil {
			return err
		}
		return nil
	case tar.TypeFifo:
		if err := unix.Mknodat(dirfd, base, unix.S_IFIFO|mode, 0); err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
	default:
		return fmt.Errorf("entry type %q is not supported (devices are not copied into containers): %w", hdr.Typeflag, errdefs.ErrNotImplemented)
	}
	// Ownership as in the tar, as docker cp does; a link's own.
	return unix.Fchownat(dirfd, base, hdr.Uid, hdr.Gid, unix.AT_SYMLINK_NOFOLLOW)
}

// MkdirAll makes p and its missing parents inside the root.
func (r *Root) MkdirAll(p string, mode uint32) error {
	parts := strings.Split(rel(p), "/")
	if parts[0] == "." {
		return nil
	}
	for i := range parts {
		d, err := r.open(strings.Join(parts[:i], "/"), unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(int(d.Fd()), parts[i], mode)
		d.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return pathError(p, err)
		}
	}
	return nil
}
