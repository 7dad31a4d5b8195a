package export

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/p9"
)

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
		conn.Close()
		return fmt.Errorf("export %s: not a file name", path)
	}
	return serve(ctx, conn, dir, base, o)
}

// exportTree is one export's files, as 9P serves them and as the
// extension's Tlistdir describes them.
type exportTree interface {
	p9.Attacher
	statNames(dir p9.File, names []string) []p9x.Entry
}

// handle serves t's files on conn until conn closes or ctx ends (it then
// closes conn).
func handle(ctx context.Context, conn io.ReadWriteCloser, root string, t exportTree) error {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// Handle returns once the connection fails or closes and every
	// in-flight request has finished; it closes conn.
	x := p9x.Serve(conn, func(dir string, offset uint64, max int) (uint64, []p9x.Dirent, bool, error) {
		return listDir(t, dir, offset, max)
	})
	_ = p9.NewServer(t).Handle(x, x)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("export %s: %w", root, err)
	}
	return nil
}

// owners are chown's arguments for a SetAttr (-1: unchanged).
func owners(valid p9.SetAttrMask, attr p9.SetAttr) (uid, gid int) {
	uid, gid = -1, -1
	if valid.UID {
		uid = int(attr.UID)
	}
	if valid.GID {
		gid = int(attr.GID)
	}
	return uid, gid
}

// inodes makes QID paths unique within an export: inode numbers of the
// root's device as they are, other devices (mounts below the root) tagged
// in the top byte.
type inodes struct {
	rootDev uint64
	mu      sync.Mutex
	devs    map[uint64]uint64 // other devices below root → small index
}

func (in *inodes) path(dev, ino uint64) uint64 {
	if dev == in.rootDev {
		return ino
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	tag, ok := in.devs[dev]
	if !ok {
		if in.devs == nil {
			in.devs = map[uint64]uint64{}
		}
		tag = uint64(len(in.devs)%255 + 1)
		in.devs[dev] = tag
	}
	return tag<<56 | ino&(1<<56-1)
}
