package pin

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"
)

// File bind-mounts the regular file at path, opened without following a
// link in its last component, onto pinned (created empty, 0600; it must
// not exist).
func File(path, pinned string) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("single file %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("single file %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%w: single file %s is not a regular file (a symlink, a directory or a device): a single-file client-local mount takes a regular file", errdefs.ErrInvalidArgument, path)
	}
	f, err := os.OpenFile(pinned, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("single file %s: %w", path, err)
	}
	f.Close()
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), pinned, "", unix.MS_BIND, ""); err != nil {
		_ = os.Remove(pinned)
		return fmt.Errorf("single file %s: bind: %w", path, err)
	}
	return nil
}

// Remove detaches and removes a pinned file; one that is not there (or
// not mounted) is no error.
func Remove(pinned string) error {
	if err := unix.Unmount(pinned, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unpin %s: %w", pinned, err)
	}
	if err := os.Remove(pinned); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("unpin %s: %w", pinned, err)
	}
	return nil
}
