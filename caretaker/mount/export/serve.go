//go:build linux

package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

func serve(ctx context.Context, conn io.ReadWriteCloser, root, only string, o Options) error {
	if o.Portable || !haveOpenat2() {
		return servePortable(ctx, conn, root, only, o)
	}
	t, err := openTree(root, only, o)
	if err != nil {
		conn.Close()
		return err
	}
	defer t.close()
	return handle(ctx, conn, root, t)
}

// tree is one export: its root directory fd and policy.
type tree struct {
	rootfd int // O_PATH|O_DIRECTORY
	procfd int // /proc/self/fd, for reopening O_PATH fds
	ro     bool
	only   string // when set, the only name visible in the root
	live   atomic.Int64
	max    int64 // of live

	inos inodes
}

var _ p9.Attacher = (*tree)(nil)

func openTree(root, only string, o Options) (*tree, error) {
	// The root itself is what the developer named: resolving it normally
	// (following links to get there) is intended.
	rootfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", root, err)
	}
	procfd, err := unix.Open("/proc/self/fd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(rootfd)
		return nil, fmt.Errorf("export %s: open /proc/self/fd: %w", root, err)
	}
	t := &tree{rootfd: rootfd, procfd: procfd, ro: o.ReadOnly, only: only, max: maxNodes}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		t.max = min(t.max, int64(rl.Cur*3/4))
	}
	st, err := statFD(rootfd)
	if err != nil {
		t.close()
		return nil, fmt.Errorf("export %s: %w", root, err)
	}
	t.inos.rootDev = unix.Mkdev(st.Dev_major, st.Dev_minor)
	if only != "" {
		st, err := statAt(rootfd, only)
		if err == nil && fileType(st.Mode) != unix.S_IFREG {
			err = errors.New("not a regular file")
		}
		if err != nil {
			t.close()
			return nil, fmt.Errorf("export %s: %w", filepath.Join(root, only), err)
		}
	}
	return t, nil
}

func (t *tree) close() {
	unix.Close(t.rootfd)
	unix.Close(t.procfd)
}

// Attach implements p9.Attacher: every attach gets its own root node.
func (t *tree) Attach() (p9.File, error) {
	fd, err := unix.FcntlInt(uintptr(t.rootfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("attach: %w", err)
	}
	return t.newNode(fd, unix.S_IFDIR, true)
}

// qid names an inode uniquely within the export: inode numbers of the
// root's device as they are, other devices (mounts below the root) tagged
// in the top byte.
func (t *tree) qid(st *unix.Statx_t) p9.QID {
	return p9.QID{Type: p9.FileMode(st.Mode).QIDType(), Path: t.inos.path(unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino)}
}

// haveOpenat2 reports whether this kernel has openat2(2) (Linux 5.6).
var haveOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err == nil {
		unix.Close(fd)
	}
	return err != unix.ENOSYS
})
