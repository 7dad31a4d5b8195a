package hostlock

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// errHeld is what LockFileEx says of a lock another holds.
var errHeld = windows.ERROR_LOCK_VIOLATION

// flock takes f's exclusive lock without waiting.
func flock(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}

// funlock releases it.
func funlock(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// owner: Windows files have no uid; the directory's ACL is the user's.
func owner(fs.FileInfo) (int, bool) { return 0, false }

// modeBits: Go's mode bits of a Windows directory say nothing of its ACL.
const modeBits = false
