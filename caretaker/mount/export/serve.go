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

// maxNodes bounds the files the peer may hold at once (each holds one
// O_PATH descriptor here), further bounded by three quarters of this
// process's open-file limit; past it walks fail with ENFILE.
const maxNodes = 1 << 17

// Serve exports the directory root over 9P2000.L on conn until conn closes
// or ctx ends (it then closes conn). Nothing outside root is reachable:
// names are single components resolved below directory descriptors,
// symlinks are never followed, device nodes are never created or opened.
func Serve(ctx context.Context, conn io.ReadWriteCloser, root string, o Options) error {
	return serve(ctx, conn, root, "", o)
}

// ServeFile exports the single file at path: the export's root is the
// file's parent directory, but its only visible name is the file's base
// name, which cannot be removed, renamed or replaced (an editor's atomic
// save through the mount therefore fails, as with any single-file bind
// mount). Mount the export and bind root/<base>.
func ServeFile(ctx context.Context, conn io.ReadWriteCloser, path string, o Options) error {
	dir, base := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	if checkName(base) != nil {
		return fmt.Errorf("export %s: not a file name", path)
	}
	return serve(ctx, conn, dir, base, o)
}

func serve(ctx context.Context, conn io.ReadWriteCloser, root, only string, o Options) error {
	t, err := openTree(root, only, o)
	if err != nil {
		conn.Close()
		return err
	}
	defer t.close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// Handle returns once the connection fails or closes and every
	// in-flight request has finished; it closes conn.
	_ = p9.NewServer(t).Handle(conn, conn)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("export %s: %w", root, err)
	}
	return nil
}

// tree is one export: its root directory fd and policy.
type tree struct {
	rootfd int // O_PATH|O_DIRECTORY
	procfd int // /proc/self/fd, for reopening O_PATH fds
	ro     bool
	only   string // when set, the only name visible in the root
	live   atomic.Int64
	max    int64 // of live

	devMu   sync.Mutex
	rootDev uint64
	devs    map[uint64]uint64 // other devices below root → small index
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
	t := &tree{rootfd: rootfd, procfd: procfd, ro: o.ReadOnly, only: only, devs: map[uint64]uint64{}, max: maxNodes}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		t.max = min(t.max, int64(rl.Cur*3/4))
	}
	st, err := statFD(rootfd)
	if err != nil {
		t.close()
		return nil, fmt.Errorf("export %s: %w", root, err)
	}
	t.rootDev = unix.Mkdev(st.Dev_major, st.Dev_minor)
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
	path := st.Ino
	if dev := unix.Mkdev(st.Dev_major, st.Dev_minor); dev != t.rootDev {
		path = t.devTag(dev)<<56 | st.Ino&(1<<56-1)
	}
	return p9.QID{Type: p9.FileMode(st.Mode).QIDType(), Path: path}
}

func (t *tree) devTag(dev uint64) uint64 {
	t.devMu.Lock()
	defer t.devMu.Unlock()
	tag, ok := t.devs[dev]
	if !ok {
		tag = uint64(len(t.devs)%255 + 1)
		t.devs[dev] = tag
	}
	return tag
}

// Supported says why this system cannot export: never, on Linux.
func Supported() error { return nil }
