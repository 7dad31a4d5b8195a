package hostlock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultDir is one fixed place per user, whatever TMPDIR says, so that
// every cornus of that user on the host sees the same locks. environ nil
// reads the process's environment.
func DefaultDir(environ []string, euid int) string {
	if euid == 0 {
		return "/run/cornus/locks"
	}
	runtimeDir, ok := "", false
	for _, kv := range environ {
		if v, found := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); found {
			runtimeDir, ok = v, true
		}
	}
	if !ok && environ == nil {
		runtimeDir = os.Getenv("XDG_RUNTIME_DIR")
	}
	if filepath.IsAbs(runtimeDir) {
		return filepath.Join(runtimeDir, "cornus", "locks")
	}
	return filepath.Join("/tmp/cornus-"+strconv.Itoa(euid), "locks")
}

// HeldError is the error of a wait that ended with its context while
// another process held the lock.
type HeldError struct {
	PID int   // the holder's process, 0 when unknown
	Err error // the context's error
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("held by pid %d: %v", e.PID, e.Err)
	}
	return fmt.Sprintf("held by another process: %v", e.Err)
}

func (e *HeldError) Unwrap() error { return e.Err }

// Lock takes the lock name (a file name) in dir, waiting while another
// holds it, until ctx ends (a *HeldError). waiting, when not nil, is
// called once if it must wait, with the holder's pid (0 when unknown).
// It returns the unlock.
//
// The holder removes the file before unlocking, and one left by a crashed
// holder (its flock is free) is taken over and removed by the next.
// Because a file may be unlinked between our open and our flock, a lock
// counts only if the path still names the inode we locked.
func Lock(ctx context.Context, dir, name string, waiting func(pid int)) (func(), error) {
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	waited := false
	for {
		f, err := tryLock(path)
		switch {
		case err == nil:
			// The holder's pid tells a waiting cornus whom it waits for.
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return func() {
				_ = os.Remove(path) // while locked: nobody can hold it meanwhile
				_ = f.Close()       // releases the flock
			}, nil
		case errors.Is(err, errUnlinked):
			continue // the holder removed it just now: try the new file
		case !errors.Is(err, errHeld):
			return nil, err
		}
		pid := holderPID(path)
		if !waited && waiting != nil {
			waiting(pid)
		}
		waited = true
		select {
		case <-ctx.Done():
			return nil, &HeldError{PID: pid, Err: ctx.Err()}
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// errUnlinked means the file was locked after its holder removed it.
var errUnlinked = errors.New("lock file was removed")

// tryLock opens and flocks path without blocking: EWOULDBLOCK when held.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockOpened(f, path); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// lockOpened flocks f, opened at path, and checks path still names it: a
// lock on a file its holder unlinked after we opened it excludes nobody
// who opens the path now.
func lockOpened(f *os.File, path string) error {
	if err := flock(f); err != nil {
		return err
	}
	held, err1 := f.Stat()
	named, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, named) {
		_ = funlock(f)
		return errUnlinked
	}
	return nil
}

// holderPID reads the pid the lock's holder wrote (0 if none yet).
func holderPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// ensureDir creates dir and refuses one someone else could tamper with:
// a lock in a directory another user can write is no lock.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	uid, ok := owner(fi)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("lock directory %s is not a directory", dir)
	case ok && uid != os.Geteuid():
		return fmt.Errorf("lock directory %s belongs to uid %d, not you (%d): remove it or set another", dir, uid, os.Geteuid())
	case modeBits && fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("lock directory %s is writable by others (%v): chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}
