package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"
)

// Root is an open container root (e.g. /proc/<pid>/root of its init).
type Root struct{ fd int }

// Open opens the directory at dir as a root.
func Open(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open container root: %w", err)
	}
	return &Root{fd: fd}, nil
}

// Close releases the root.
func (r *Root) Close() error { return unix.Close(r.fd) }

// rel is p as a path relative to the root ("." for the root itself).
func rel(p string) string {
	if c := strings.TrimPrefix(path.Clean("/"+p), "/"); c != "" {
		return c
	}
	return "."
}

// open resolves p inside the root, as the container would resolve it; it
// creates nothing (mode 0).
func (r *Root) open(p string, flags int) (*os.File, error) {
	fd, err := openat2(r.fd, rel(p), flags, 0, unix.RESOLVE_IN_ROOT)
	if err != nil {
		return nil, pathError(p, err)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// openat2 retries EINTR and EAGAIN (a rename raced the lookup).
func openat2(dirfd int, name string, flags int, mode uint32, resolve uint64) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: resolve | unix.RESOLVE_NO_MAGICLINKS}
	for range 16 {
		fd, err := unix.Openat2(dirfd, name, how)
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// child opens one component of an open directory, never following a
// symlink.
func child(dirfd int, name string, flags int, mode uint32) (int, error) {
	return openat2(dirfd, name, flags|unix.O_NOFOLLOW, mode, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS)
}

// parent opens the directory holding p and returns p's last component
// ("." when p is the root).
func (r *Root) parent(p string) (*os.File, string, error) {
	rp := rel(p)
	if rp == "." {
		d, err := r.open(".", unix.O_PATH|unix.O_DIRECTORY)
		return d, ".", err
	}
	d, err := r.open(path.Dir("/"+rp), unix.O_PATH|unix.O_DIRECTORY)
	return d, path.Base(rp), err
}

// Stat describes p itself (a final symlink is not followed, as docker cp
// stats it).
type Stat struct {
	Name       string
	Size       int64
	Mode       os.FileMode
	Mtime      time.Time
	LinkTarget string
	UID, GID   int
}

// Lstat describes p.
func (r *Root) Lstat(p string) (Stat, error) {
	d, base, err := r.parent(p)
	if err != nil {
		return Stat{}, err
	}
	defer d.Close()
	st, err := statAt(int(d.Fd()), base)
	if err != nil {
		return Stat{}, pathError(p, err)
	}
	if base == "." {
		st.Name = "/"
	}
	return st, nil
}

func statAt(dirfd int, name string) (Stat, error) {
	var s unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &s, unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
		return Stat{}, err
	}
	st := Stat{Name: name, Size: s.Size, Mode: fileMode(s.Mode), Mtime: time.Unix(s.Mtim.Unix()), UID: int(s.Uid), GID: int(s.Gid)}
	if st.Mode&os.ModeSymlink != 0 {
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return Stat{}, err
		}
		st.LinkTarget = string(buf[:n])
	}
	return st, nil
}

// fileMode converts stat mode bits to os.FileMode.
func fileMode(m uint32) os.FileMode {
	mode := os.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= os.ModeDir
	case unix.S_IFLNK:
		mode |= os.ModeSymlink
	case unix.S_IFIFO:
		mode |= os.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= os.ModeSocket
	case unix.S_IFCHR:
		mode |= os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		mode |= os.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= os.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= os.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= os.ModeSticky
	}
	return mode
}

// pathError classes an errno: a missing path is NotFound, an escape
// attempt InvalidArgument.
func pathError(p string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s: no such file or directory in the container: %w", p, errdefs.ErrNotFound)
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%s: refused, it leads outside the container or through a link (%v): %w", p, err, errdefs.ErrInvalidArgument)
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("%s: not a directory: %w", p, errdefs.ErrInvalidArgument)
	}
	return fmt.Errorf("%s: %w", p, err)
}
