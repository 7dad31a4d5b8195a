//go:build unix

package hostlock

import (
	"io/fs"
	"os"
	"syscall"
)

// errHeld is what flock says of a lock another holds.
var errHeld = syscall.EWOULDBLOCK

// flock takes f's exclusive lock without waiting.
func flock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// funlock releases it.
func funlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// owner is the uid that owns fi's file.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// modeBits: a directory's mode says who may write it.
const modeBits = true
