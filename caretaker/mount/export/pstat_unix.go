//go:build linux || darwin

package export

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileLimit is three quarters of this process's open-file limit.
func fileLimit() int64 {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		return int64(rl.Cur * 3 / 4)
	}
	return maxNodes
}

// fstatfs describes the file system holding the open file f.
func fstatfs(f *os.File, s *unix.Statfs_t) error {
	return withFD(f, func(fd int) error { return unix.Fstatfs(fd, s) })
}

// withFD runs call with f's descriptor.
func withFD(f *os.File, call func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := rc.Control(func(fd uintptr) { cerr = call(int(fd)) }); err != nil {
		return err
	}
	return cerr
}
