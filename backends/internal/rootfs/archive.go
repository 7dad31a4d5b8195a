package rootfs

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"slices"

	"golang.org/x/sys/unix"
)

// Archive writes p (a file, a link, or a directory and everything below
// it) to w as a tar whose entries are named from p's base name, as
// docker cp's archive endpoint does. Links inside are archived as links.
func (r *Root) Archive(p string, w io.Writer) error {
	d, base, err := r.parent(p)
	if err != nil {
		return err
	}
	defer d.Close()
	name := base
	if base == "." {
		name = "."
	}
	tw := tar.NewWriter(w)
	if err := archiveAt(tw, int(d.Fd()), base, name); err != nil {
		return fmt.Errorf("archive %s: %w", p, err)
	}
	return tw.Close()
}

func archiveAt(tw *tar.Writer, dirfd int, base, name string) error {
	st, err := statAt(dirfd, base)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: name, Mode: int64(st.Mode.Perm()), Uid: st.UID, Gid: st.GID, ModTime: st.Mtime, Format: tar.FormatPAX}
	if st.Mode&os.ModeSetuid != 0 {
		hdr.Mode |= 0o4000
	}
	if st.Mode&os.ModeSetgid != 0 {
		hdr.Mode |= 0o2000
	}
	if st.Mode&os.ModeSticky != 0 {
		hdr.Mode |= 0o1000
	}
	switch {
	case st.Mode.IsRegular():
		hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size
		fd, err := child(dirfd, base, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		// The file may change while copied: exactly Size bytes go out.
		n, err := io.Copy(tw, io.LimitReader(f, st.Size))
		if err == nil && n < st.Size {
			_, err = tw.Write(make([]byte, st.Size-n))
		}
		return err
	case st.Mode.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		var fd int
		if base == "." {
			fd, err = openat2(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0, unix.RESOLVE_BENEATH)
		} else {
			fd, err = child(dirfd, base, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		}
		if err != nil {
			return err
		}
		dir := os.NewFile(uintptr(fd), name)
		defer dir.Close()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		names, err := dir.Readdirnames(-1)
		if err != nil {
			return err
		}
		slices.Sort(names)
		for _, n := range names {
			if err := archiveAt(tw, fd, n, path.Join(name, n)); err != nil {
				return err
			}
		}
		return nil
	case st.Mode&os.ModeSymlink != 0:
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, st.LinkTarget
	case st.Mode&os.ModeNamedPipe != 0:
		hdr.Typeflag = tar.TypeFifo
	default:
		return nil // devices and sockets are not copied
	}
	return tw.WriteHeader(hdr)
}
