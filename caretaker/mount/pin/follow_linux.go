package pin

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Pin is a pinned file that follows its path: when the client replaces
// the file with another regular file (an editor saving by rename), that
// one is pinned instead, so the next start of the container binds the
// edited file; anything else at the path (a symlink, a directory,
// nothing) is ignored and the last regular file stays pinned.
type Pin struct {
	path, pinned string
	stop, done   chan struct{}

	mu  sync.Mutex
	dev uint64
	ino uint64
}

// Follow pins the regular file at path onto pinned (File) and then
// looks at path every interval until Remove.
func Follow(path, pinned string, every time.Duration) (*Pin, error) {
	if err := File(path, pinned); err != nil {
		return nil, err
	}
	p := &Pin{path: path, pinned: pinned, stop: make(chan struct{}), done: make(chan struct{})}
	var st unix.Stat_t
	if err := unix.Stat(pinned, &st); err == nil {
		p.dev, p.ino = st.Dev, st.Ino
	}
	go p.follow(every)
	return p, nil
}

// Pinned is the file the container binds.
func (p *Pin) Pinned() string { return p.pinned }

func (p *Pin) follow(every time.Duration) {
	defer close(p.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		_, _ = p.Refresh()
	}
}

// Refresh pins the file at path again if it is another regular file
// than the one pinned, and reports whether it did.
func (p *Pin) Refresh() (bool, error) {
	fd, err := unix.Open(p.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil // gone for now: keep the last one
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil // not a regular file: never followed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.Dev == p.dev && st.Ino == p.ino {
		return false, nil
	}
	// The old pin goes, the new inode is bound in its place (a container
	// starting in between finds the empty file, not a host path).
	if err := unix.Unmount(p.pinned, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return false, fmt.Errorf("re-pin %s: %w", p.path, err)
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), p.pinned, "", unix.MS_BIND, ""); err != nil {
		return false, fmt.Errorf("re-pin %s: %w", p.path, err)
	}
	p.dev, p.ino = st.Dev, st.Ino
	return true, nil
}

// Remove stops following and removes the pin.
func (p *Pin) Remove() error {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return Remove(p.pinned)
}
