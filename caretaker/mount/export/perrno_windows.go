package export

import (
	"errors"
	"syscall"

	"github.com/hugelgupf/p9/linux"
	"golang.org/x/sys/windows"
)

// sysErrno maps a Windows error to the Linux errno 9P2000.L carries.
func sysErrno(err error) (linux.Errno, bool) {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return 0, false
	}
	switch e {
	case windows.ERROR_FILE_NOT_FOUND, windows.ERROR_PATH_NOT_FOUND, windows.ERROR_INVALID_DRIVE:
		return linux.ENOENT, true
	case windows.ERROR_ACCESS_DENIED:
		return linux.EACCES, true
	case windows.ERROR_FILE_EXISTS, windows.ERROR_ALREADY_EXISTS:
		return linux.EEXIST, true
	case windows.ERROR_DIR_NOT_EMPTY:
		return linux.ENOTEMPTY, true
	case windows.ERROR_DIRECTORY:
		return linux.ENOTDIR, true
	case windows.ERROR_INVALID_NAME, windows.ERROR_BAD_PATHNAME, windows.ERROR_INVALID_PARAMETER:
		return linux.EINVAL, true
	case windows.ERROR_SHARING_VIOLATION, windows.ERROR_LOCK_VIOLATION:
		return linux.EBUSY, true
	case windows.ERROR_NOT_SAME_DEVICE:
		return linux.EXDEV, true
	case windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL:
		return linux.ENOSPC, true
	case windows.ERROR_FILENAME_EXCED_RANGE:
		return linux.ENAMETOOLONG, true
	case windows.ERROR_PRIVILEGE_NOT_HELD:
		return linux.EPERM, true
	case windows.ERROR_NOT_SUPPORTED, windows.ERROR_CALL_NOT_IMPLEMENTED, syscall.EWINDOWS:
		return linux.EOPNOTSUPP, true
	case windows.ERROR_WRITE_PROTECT:
		return linux.EROFS, true
	case windows.ERROR_CANT_RESOLVE_FILENAME:
		return linux.ELOOP, true
	}
	return linux.EIO, true
}
