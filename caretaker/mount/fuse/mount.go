package fuse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hugelgupf/p9/p9"
)

// Options tune a mount.
type Options struct {
	// ReadOnly mounts read-only (the kernel answers EROFS; a read-only
	// export refuses writes on its side as well).
	ReadOnly bool
	// AllowOther lets every user of this host (a container's users) use
	// the mount, with the exporting user's rights. Keep the mountpoint's
	// parent private.
	AllowOther bool
}

const (
	// maxIO is the largest read or write, in one FUSE request and one 9P
	// message.
	maxIO = 1 << 20
	// msize leaves room for the 9P header around a maxIO payload.
	msize = maxIO + 4<<10
	// cacheTTL is how long the kernel trusts names and attributes: an edit
	// on the exporting side shows within it.
	cacheTTL = time.Second
	// maxFids bounds the walked (unopened) fids held at once; each pins a
	// descriptor on the exporting machine. Past it the least recently
	// used node walks its name again when next used.
	maxFids = 8192
	// drainTimeout bounds how long Unmount waits for the FUSE loop after
	// a forced (lazy) unmount.
	drainTimeout = 10 * time.Second
)

// FS is a 9P2000.L export mounted as a FUSE file system (Mount makes one).
type FS struct {
	mountpoint string
	conn       *p9x.Client // the p9 client's connection, and the extension's
	client     *p9.Client
	server     *gofuse.Server
	clunk      *clunker
	fids       budget
	prefetch   chan struct{} // bounds walks ahead in flight
	stop       func() bool

	once sync.Once
	err  error
}

// Mount mounts the 9P export reached over conn at mountpoint. The mount
// lives until Unmount, or until ctx ends (then it is unmounted as by
// Unmount). If the export side goes away, operations fail promptly with
// ENOTCONN and Unmount still works.
func Mount(ctx context.Context, conn io.ReadWriteCloser, mountpoint string, o Options) (*FS, error) {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	x := p9x.NewClient(conn)
	// Until mounted, ctx ending or a silent export must not block us.
	cancel := context.AfterFunc(ctx, func() { x.Close() })
	m, err := mount(x, abs, o)
	if !cancel() || err != nil {
		if err == nil {
			_ = m.Unmount() // best effort: ctx's end is the error reported
			err = ctx.Err()
		}
		x.Close()
		return nil, fmt.Errorf("mount %s: %w", abs, err)
	}
	// Its error is kept: Unmount returns it.
	m.stop = context.AfterFunc(ctx, func() { _ = m.Unmount() })
	return m, nil
}

func mount(conn *p9x.Client, mountpoint string, o Options) (*FS, error) {
	client, err := newClient(conn)
	if err != nil {
		return nil, fmt.Errorf("9P version: %w", err)
	}
	root, err := client.Attach("")
	if err != nil {
		return nil, fmt.Errorf("9P attach: %w", err)
	}
	qid, mask, a, err := root.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return nil, fmt.Errorf("9P getattr of the root: %w", err)
	}
	if !a.Mode.IsDir() {
		return nil, errors.New("the export's root is not a directory")
	}
	// A listing's attributes come with it from an export that speaks
	// Tlistdir: the kernel may always ask for them. From any other, each
	// is a walk: only when its heuristics expect them used.
	var rdplus uint64
	if _, _, _, err := conn.ListDir("", 0, 0); errors.Is(err, p9x.ErrUnsupported) {
		rdplus = gofuse.CAP_READDIRPLUS_AUTO
	} else if err != nil {
		return nil, fmt.Errorf("9P listdir of the root: %w", err)
	}
	m := &FS{mountpoint: mountpoint, conn: conn, client: client, clunk: newClunker()}
	m.fids = budget{max: maxFids, clunk: m.clunk}
	m.prefetch = make(chan struct{}, 64)
	ttl := cacheTTL
	flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV)
	if o.ReadOnly {
		flags |= syscall.MS_RDONLY
	}
	rootStable := stable(qid, mask, a)
	opts := &fs.Options{
		EntryTimeout:    &ttl,
		AttrTimeout:     &ttl,
		NegativeTimeout: &ttl,
		RootStableAttr:  &rootStable,
		MountOptions: gofuse.MountOptions{
			FsName:            fsName,
			Name:              fsName,
			AllowOther:        o.AllowOther,
			DirectMount:       true, // as root no fusermount helper; else it is used
			DirectMountFlags:  flags,
			MaxWrite:          maxIO,
			MaxReadAhead:      maxIO,
			MaxBackground:     64,
			ExtraCapabilities: rdplus,
			DisableXAttrs:     true,
			Debug:             os.Getenv("CORNUS_FUSE_DEBUG") != "",
		},
	}
	m.server, err = fs.Mount(mountpoint, m.newNode(root, true), opts)
	if err != nil {
		m.clunk.stop()
		return nil, err
	}
	return m, nil
}

// Unmount unmounts and closes the connection to the export. If the mount
// is busy (files still open) or the export is gone, it detaches the mount
// lazily, fails every pending operation and aborts the FUSE connection, so
// nothing stays mounted and no goroutine stays blocked. Safe to call more
// than once; later calls return the first result.
func (m *FS) Unmount() error {
	m.once.Do(func() {
		if m.stop != nil {
			m.stop()
		}
		m.err = m.unmount()
		m.clunk.stop()
	})
	return m.err
}

func (m *FS) unmount() error {
	dev, devErr := fuseConn(m.mountpoint)
	if err := m.server.Unmount(); err == nil {
		m.client.Close()
		return nil
	}
	// Busy or wedged: fail every request from here on, detach, abort.
	m.client.Close()
	if err := lazyUnmount(m.mountpoint); err != nil {
		return fmt.Errorf("unmount %s: %w", m.mountpoint, err)
	}
	if devErr == nil {
		_ = abort(dev) // best effort: the loop may also end on its own
	}
	done := make(chan struct{})
	go func() { m.server.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(drainTimeout):
		return fmt.Errorf("unmount %s: detached, but files on it are still open", m.mountpoint)
	}
}

// Wait blocks until the file system is unmounted (by Unmount, or from
// outside, e.g. fusermount -u).
func (m *FS) Wait() { m.server.Wait() }

// Mountpoint is where the export is mounted.
func (m *FS) Mountpoint() string { return m.mountpoint }
