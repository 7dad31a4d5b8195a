package kernel9p

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/cornus-dev/cornus/caretaker/mount/mountinfo"
)

// Options tune a mount.
type Options struct {
	// ReadOnly mounts read-only (the kernel answers EROFS; a read-only
	// export refuses writes on its side as well).
	ReadOnly bool
}

// How cornus's 9p mounts show in the mount table.
const (
	fsType = "9p"
	source = "cornus"
)

// msize is the largest 9P message: 1 MiB of payload and its header, as
// the FUSE path uses.
const msize = 1<<20 + 4<<10

// Available reports whether this kernel has the 9p file system
// (/proc/filesystems lists it; a module not loaded yet does not count).
func Available() bool {
	f, err := os.Open("/proc/filesystems")
	if err != nil {
		return false
	}
	defer f.Close()
	return listsNinep(f)
}

func listsNinep(r io.Reader) bool {
	sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && f[len(f)-1] == "9p" {
			return true
		}
	}
	return false
}

// mountData is the 9p mount's option string for the kernel's end fd:
// 9P2000.L, one attach shared by every user of the mount with the
// exporting user's rights (access=any, as FUSE's allow_other), and no
// cache so an edit on either side shows at once.
func mountData(fd int) string {
	return fmt.Sprintf("trans=fd,rfdno=%d,wfdno=%d,version=9p2000.L,msize=%d,access=any,cache=none,uname=cornus", fd, fd, msize)
}

// FS is an export mounted by the kernel (Mount makes one).
type FS struct {
	mountpoint string
	conn       io.ReadWriteCloser
	pipe       net.Conn
	copies     sync.WaitGroup

	once sync.Once
	err  error
}

// Mount mounts the 9P export reached over conn at mountpoint. conn is
// closed by Unmount, or at once when the mount fails. ctx bounds the
// mount itself (an export that never answers the kernel's version and
// attach); the mount then lives until Unmount.
func Mount(ctx context.Context, conn io.ReadWriteCloser, mountpoint string, o Options) (*FS, error) {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("mount %s: socketpair: %w", abs, err)
	}
	kernel := os.NewFile(uintptr(fds[0]), "9p-kernel")
	ours := os.NewFile(uintptr(fds[1]), "9p-cornus")
	pipe, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		kernel.Close()
		conn.Close()
		return nil, fmt.Errorf("mount %s: %w", abs, err)
	}
	m := &FS{mountpoint: abs, conn: conn, pipe: pipe}
	// The kernel's version and attach go over the pipe during mount(2):
	// the copies run first.
	m.copies.Add(2)
	go m.copy(pipe, conn)
	go m.copy(conn, pipe)
	flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV)
	if o.ReadOnly {
		flags |= syscall.MS_RDONLY
	}
	// A silent export: closing our end fails the kernel's handshake.
	cancel := context.AfterFunc(ctx, func() { pipe.Close() })
	err = syscall.Mount(source, abs, fsType, flags, mountData(int(kernel.Fd())))
	kernel.Close() // the mount holds its own reference
	if !cancel() && err == nil {
		_ = syscall.Unmount(abs, syscall.MNT_DETACH)
		err = ctx.Err()
	}
	if err != nil {
		m.close()
		return nil, fmt.Errorf("mount %s (9p): %w", abs, err)
	}
	return m, nil
}

// copy moves bytes one way; either side ending ends both.
func (m *FS) copy(dst io.WriteCloser, src io.Reader) {
	defer m.copies.Done()
	_, _ = io.Copy(dst, src)
	m.pipe.Close()
	m.conn.Close()
}

func (m *FS) close() {
	m.pipe.Close()
	m.conn.Close()
	m.copies.Wait()
}

// Unmount unmounts and closes the connection to the export. A busy mount
// (files still open) is detached lazily and its connection closed, so
// every pending operation fails at once and nothing stays mounted. Safe
// to call more than once; later calls return the first result.
func (m *FS) Unmount() error {
	m.once.Do(func() {
		err := syscall.Unmount(m.mountpoint, 0)
		if err != nil && !errors.Is(err, syscall.EINVAL) {
			err = syscall.Unmount(m.mountpoint, syscall.MNT_DETACH)
		}
		if errors.Is(err, syscall.EINVAL) {
			err = nil // not mounted any more (unmounted from outside)
		}
		m.close()
		if err != nil {
			m.err = fmt.Errorf("unmount %s: %w", m.mountpoint, err)
		}
	})
	return m.err
}

// Mountpoint is where the export is mounted.
func (m *FS) Mountpoint() string { return m.mountpoint }

// Sweep detaches every cornus 9p mount at or below dir: what a process
// that died left mounted (its end of the socket pair went with it, so
// every operation on the mount fails). It returns the mountpoints it
// detached.
func Sweep(dir string) ([]string, error) {
	mounts, err := Mounted(dir)
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- { // deepest first
		err := syscall.Unmount(mounts[i], syscall.MNT_DETACH)
		if err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mounts[i], err))
			continue
		}
		done = append(done, mounts[i])
	}
	return done, errors.Join(errs...)
}

// Mounted lists the cornus 9p mountpoints at or below dir in this mount
// namespace.
func Mounted(dir string) ([]string, error) { return mountinfo.Points(dir, fsType, source) }
