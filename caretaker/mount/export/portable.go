package export

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/fsimpl/templatefs"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// The portable confinement, for systems without openat2(2) (macOS,
// Windows, Linux before 5.6) and selectable on Linux with
// Options.Portable, so both are tested where CI runs. Every directory
// node holds its own os.Root, a descriptor (a handle on Windows) of that
// directory; a name is resolved only as one component below it, and a
// name found to be a symlink is never followed: its Lstat decides what it
// is, and what was opened must be the very file that Lstat saw. Whatever a
// race does, os.Root itself keeps every open below the export's root.

// servePortable is serve with the portable confinement.
func servePortable(ctx context.Context, conn io.ReadWriteCloser, root, only string, o Options) error {
	t, err := openPTree(root, only, o)
	if err != nil {
		conn.Close()
		return err
	}
	defer t.close()
	return handle(ctx, conn, root, t)
}

// ptree is one portable export: its root and policy.
type ptree struct {
	root *dirRef
	ro   bool
	only string // when set, the only name visible in the root
	live atomic.Int64
	max  int64 // of live

	inos inodes
}

var _ p9.Attacher = (*ptree)(nil)

func openPTree(root, only string, o Options) (*ptree, error) {
	// The root itself is what the developer named: resolving it normally
	// (following links to get there) is intended.
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", root, err)
	}
	t := &ptree{root: newDirRef(r), ro: o.ReadOnly, only: only, max: min(maxNodes, fileLimit())}
	fi, err := r.Lstat(".")
	if err != nil {
		t.close()
		return nil, fmt.Errorf("export %s: %w", root, err)
	}
	t.inos.rootDev, _ = fileID(fi)
	if only != "" {
		fi, err := r.Lstat(only)
		if err == nil && !fi.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err != nil {
			t.close()
			return nil, fmt.Errorf("export %s: %w", path.Join(root, only), err)
		}
	}
	return t, nil
}

func (t *ptree) close() { t.root.release() }

// Attach implements p9.Attacher: every attach gets its own root node.
func (t *ptree) Attach() (p9.File, error) {
	return t.newNode(&pnode{dir: t.root.hold(), rel: ".", typ: fs.ModeDir, isRoot: true})
}

func (t *ptree) newNode(n *pnode) (*pnode, error) {
	if t.live.Add(1) > t.max {
		t.live.Add(-1)
		n.drop()
		return nil, linux.ENFILE
	}
	n.t = t
	return n, nil
}

// qid names a file uniquely within the export: inode numbers of the root's
// device as they are, other devices tagged in the top byte; where the
// system has no inode numbers (Windows), a hash of the path in the export.
func (t *ptree) qid(fi fs.FileInfo, rel string) p9.QID {
	typ := p9.ModeFromOS(fi.Mode()).QIDType()
	dev, ino := fileID(fi)
	if ino == 0 {
		return p9.QID{Type: typ, Path: pathID(rel)}
	}
	return p9.QID{Type: typ, Path: t.inos.path(dev, ino)}
}

// dirRef is one open directory, shared by its node and the nodes of the
// files in it; the last release closes it.
type dirRef struct {
	r    *os.Root
	refs atomic.Int32
}

func newDirRef(r *os.Root) *dirRef {
	d := &dirRef{r: r}
	d.refs.Store(1)
	return d
}

func (d *dirRef) hold() *dirRef { d.refs.Add(1); return d }

func (d *dirRef) release() {
	if d.refs.Add(-1) == 0 {
		d.r.Close()
	}
}

// pnode is one 9P file of a portable export. A directory holds itself
// (dir); any other file is a name in the directory that holds it (parent,
// name). rel, its path from the export's root, serves the operations that
// span two directories (rename, link) and Windows' QIDs.
type pnode struct {
	templatefs.XattrUnimplemented
	templatefs.NotLockable

	t      *ptree
	dir    *dirRef // a directory: itself
	parent *dirRef // anything else: its directory
	name   string  // anything else: its name there
	rel    string
	typ    fs.FileMode // fs.ModeType bits
	isRoot bool

	mu     sync.Mutex // guards what follows, and the node's names
	file   *os.File   // after Open
	writes bool
	appnd  bool
	ents   []fs.DirEntry // a directory's listing, taken by a Readdir from 0
}

// at is where operations on the node itself go: a directory's own root
// and ".", else the parent's root and the name.
func (n *pnode) at() (*os.Root, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dir != nil {
		return n.dir.r, "."
	}
	return n.parent.r, n.name
}

func (n *pnode) relPath() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rel
}

func (n *pnode) drop() {
	if n.file != nil {
		n.file.Close()
		n.file = nil
	}
	if n.dir != nil {
		n.dir.release()
		n.dir = nil
	}
	if n.parent != nil {
		n.parent.release()
		n.parent = nil
	}
}

// Close implements p9.File.
func (n *pnode) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dir == nil && n.parent == nil {
		return nil
	}
	n.drop()
	n.t.live.Add(-1)
	return nil
}

// Renamed implements p9.File: the p9 server reports a rename of this node
// or of a directory above it, parents first.
func (n *pnode) Renamed(newDir p9.File, newName string) {
	nd, ok := newDir.(*pnode)
	if !ok {
		return
	}
	rel := path.Join(nd.relPath(), newName)
	nd.mu.Lock()
	dir := nd.dir
	if dir != nil {
		dir.hold()
	}
	nd.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.rel = rel
	if n.parent == nil || dir == nil {
		// A directory's descriptor follows it wherever it went.
		if dir != nil {
			dir.release()
		}
		return
	}
	n.parent.release()
	n.parent, n.name = dir, newName
}

// Rename implements p9.File; the server always uses RenameAt.
func (n *pnode) Rename(p9.File, string) error { return linux.ENOSYS }

// pathID names a file by its path in the export where no inode number is
// at hand (a directory entry; any file on Windows).
func pathID(rel string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(rel))
	return h.Sum64() | 1
}

// wirePortable puts an error on the wire as the Linux errno it means: the
// p9 server would map os errors by kind (EPERM going out as EACCES) and
// this system's errno numbers are not Linux's.
func wirePortable(err *error) {
	if *err == nil || *err == io.EOF {
		return
	}
	var le linux.Errno
	if errors.As(*err, &le) {
		*err = le
		return
	}
	if e, ok := sysErrno(*err); ok {
		*err = e
		return
	}
	*err = linux.ExtractErrno(*err)
}
