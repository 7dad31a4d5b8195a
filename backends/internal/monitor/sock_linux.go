package monitor

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// socketAddr returns an address naming the unix socket at path that fits
// sun_path: the path itself, or, for a deep records directory, the same
// file reached through /proc/self/fd/N of a descriptor of its
// directory. release closes that descriptor once bound or connected.
func socketAddr(path string) (addr string, release func(), err error) {
	if len(path) < sunPathMax {
		return path, func() {}, nil
	}
	fd, err := syscall.Open(filepath.Dir(path), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("open socket directory: %w", err)
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", fd, filepath.Base(path)), func() { syscall.Close(fd) }, nil
}
