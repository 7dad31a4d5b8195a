package monitor

import (
	"os"
	"syscall"
	"time"
)

// watchDir wakes Wait (on a record replaced) and a log follower (also on
// a log write or rotation) through inotify, which needs no cgo. A
// second's poll stays behind it: a monitor killed outright changes no
// file, and inotify instances are a per-user limit (128 by default), past
// which this falls back to polling alone.
func watchDir(dir string, what watchFor) *dirWatch {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return pollOnly()
	}
	// A record is replaced by a rename into the directory.
	var mask uint32 = syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF
	if what == logChanges {
		mask |= syscall.IN_MODIFY | syscall.IN_CREATE
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		syscall.Close(fd)
		return pollOnly()
	}
	// Non-blocking, so os.File reads through the runtime poller and Close
	// ends a pending Read.
	f := os.NewFile(uintptr(fd), "inotify "+dir)
	c := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case c <- struct{}{}:
			default: // a wake-up is pending already: events coalesce
			}
		}
	}()
	return &dirWatch{C: c, poll: time.Second, stop: func() { f.Close() }}
}
