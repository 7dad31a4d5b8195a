//go:build !windows

package export

import (
	"errors"
	"syscall"

	"github.com/hugelgupf/p9/linux"
)

// sysErrno maps this system's errno to Linux's, which 9P2000.L carries
// (the numbers differ past 34 between Linux and the BSDs).
func sysErrno(err error) (linux.Errno, bool) {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return 0, false
	}
	for _, p := range [...]struct {
		sys syscall.Errno
		lx  linux.Errno
	}{
		{syscall.EPERM, linux.EPERM}, {syscall.ENOENT, linux.ENOENT}, {syscall.EINTR, linux.EINTR},
		{syscall.EIO, linux.EIO}, {syscall.EBADF, linux.EBADF}, {syscall.EAGAIN, linux.EAGAIN},
		{syscall.ENOMEM, linux.ENOMEM}, {syscall.EACCES, linux.EACCES}, {syscall.EBUSY, linux.EBUSY},
		{syscall.EEXIST, linux.EEXIST}, {syscall.EXDEV, linux.EXDEV}, {syscall.ENOTDIR, linux.ENOTDIR},
		{syscall.EISDIR, linux.EISDIR}, {syscall.EINVAL, linux.EINVAL}, {syscall.ENFILE, linux.ENFILE},
		{syscall.EMFILE, linux.EMFILE}, {syscall.ETXTBSY, linux.ETXTBSY}, {syscall.EFBIG, linux.EFBIG},
		{syscall.ENOSPC, linux.ENOSPC}, {syscall.EROFS, linux.EROFS}, {syscall.EMLINK, linux.EMLINK},
		{syscall.ENAMETOOLONG, linux.ENAMETOOLONG}, {syscall.ENOTEMPTY, linux.ENOTEMPTY},
		{syscall.ELOOP, linux.ELOOP}, {syscall.ENOSYS, linux.ENOSYS}, {syscall.EOPNOTSUPP, linux.EOPNOTSUPP},
		{syscall.ENOTSUP, linux.EOPNOTSUPP}, {syscall.EDQUOT, linux.EDQUOT}, {syscall.ESTALE, linux.ESTALE},
	} {
		if e == p.sys {
			return p.lx, true
		}
	}
	return linux.EIO, true
}
