package fuse

import (
	"errors"
	"syscall"

	"github.com/hugelgupf/p9/linux"
)

// errno is err as the kernel should see it: a 9P error is the exporting
// side's errno as is; anything else means the transport failed (the
// export is gone), ENOTCONN as for a dead FUSE server.
func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var le linux.Errno
	if errors.As(err, &le) {
		return syscall.Errno(le)
	}
	var se syscall.Errno
	if errors.As(err, &se) {
		return se
	}
	return syscall.ENOTCONN
}
