package cni

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"
)

// NetnsPin is a namespace pin under <dataDir>/netns. After a host reboot the
// files survive but the bind mounts do not: Live is false, and a reconcile
// pass recreates the namespace (CreateNetns reuses the file) or removes it.
type NetnsPin struct {
	ID   string
	Path string
	Live bool
}

// NetnsPath is where the namespace of container id is (or would be) pinned.
func (m *Manager) NetnsPath(id string) string { return filepath.Join(m.netnsDir(), id) }

// CreateNetns creates a network namespace with lo up, pins it at
// NetnsPath(id) and returns that path. A live pin is returned as is.
func (m *Manager) CreateNetns(ctx context.Context, id string) (string, error) {
	if err := validID("container ID", id); err != nil {
		return "", fmt.Errorf("create netns: %w", err)
	}
	p := m.NetnsPath(id)
	// The lock keeps two processes from stacking two mounts on one pin.
	unlock, err := m.lock(ctx)
	if err != nil {
		return "", fmt.Errorf("create netns %s: %w", id, err)
	}
	defer unlock()
	if isNetns(p) {
		return p, nil
	}
	if err := os.MkdirAll(m.netnsDir(), 0o755); err != nil {
		return "", fmt.Errorf("create netns %s: %w", id, err)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o444)
	if err != nil {
		return "", fmt.Errorf("create netns %s: %w", id, err)
	}
	_ = f.Close()
	if err := pinNewNetns(p); err != nil {
		_ = os.Remove(p)
		return "", fmt.Errorf("create netns %s: %w", id, err)
	}
	return p, nil
}

// pinNewNetns runs on a fresh locked thread: unshare a new netns, bring lo
// up, bind-mount the thread's namespace onto target, then switch the thread
// back. Should the switch back fail, the goroutine exits still locked and
// the Go runtime throws that thread away instead of reusing it.
func pinNewNetns(target string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		orig, err := os.Open(self)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("unshare: %w", err)
			return
		}
		err = loopbackUp()
		if err == nil {
			if err = unix.Mount(self, target, "none", unix.MS_BIND, ""); err != nil {
				err = fmt.Errorf("bind mount %s: %w", self, err)
			}
		}
		if e := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); e != nil {
			errc <- errors.Join(err, fmt.Errorf("restore thread netns: %w", e))
			return // locked: the runtime retires the thread
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// loopbackUp sets IFF_UP on lo of the calling thread's namespace; a new
// namespace has it down, and runc does not bring it up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	return nil
}

// RemoveNetns unmounts and removes the pin of container id. The namespace
// (and veths left in it) goes away with its last user. Idempotent.
func (m *Manager) RemoveNetns(ctx context.Context, id string) error {
	if err := validID("container ID", id); err != nil {
		return fmt.Errorf("remove netns: %w", err)
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return fmt.Errorf("remove netns %s: %w", id, err)
	}
	defer unlock()
	p := m.NetnsPath(id)
	// Loop: a racing caller without our lock could have stacked mounts.
	for i := 0; i < 8; i++ {
		err := unix.Unmount(p, unix.MNT_DETACH)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			break
		}
		if err != nil {
			return fmt.Errorf("remove netns %s: unmount: %w", id, err)
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove netns %s: %w", id, err)
	}
	return nil
}

// ListNetns returns every pin file, live or stale.
func (m *Manager) ListNetns(_ context.Context) ([]NetnsPin, error) {
	ents, err := os.ReadDir(m.netnsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list netns: %w", err)
	}
	var pins []NetnsPin
	for _, e := range ents {
		if validID("container ID", e.Name()) != nil {
			continue // not ours
		}
		p := filepath.Join(m.netnsDir(), e.Name())
		pins = append(pins, NetnsPin{ID: e.Name(), Path: p, Live: isNetns(p)})
	}
	return pins, nil
}

// isNetns reports whether path is a live namespace (an nsfs file).
func isNetns(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.NSFS_MAGIC
}

// Do runs fn on the calling goroutine, locked to its thread, inside the
// network namespace at path, then switches back. Sockets fn opens stay in
// that namespace after Do returns; goroutines fn starts do not run in it.
func Do(path string, fn func() error) error {
	target, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("enter netns %s: %w", path, err)
	}
	defer target.Close()
	if !isNetns(path) {
		return fmt.Errorf("enter netns %s: not a network namespace: %w", path, errdefs.ErrInvalidArgument)
	}
	runtime.LockOSThread()
	orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", path, err)
	}
	defer orig.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", path, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// Stay locked: the goroutine's thread is now in the wrong namespace
		// and must not be handed to other goroutines.
		return errors.Join(ferr, fmt.Errorf("leave netns %s: %w", path, err))
	}
	runtime.UnlockOSThread()
	return ferr
}
