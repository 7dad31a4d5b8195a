//go:build linux

package export

import (
	"io"
	"sync"

	"github.com/hugelgupf/p9/fsimpl/templatefs"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// node is one 9P file: an O_PATH descriptor naming one inode below the
// root, never a path. Every operation on it or below it goes through that
// descriptor.
type node struct {
	templatefs.XattrUnimplemented
	templatefs.NotLockable

	t      *tree
	fd     int    // O_PATH|O_NOFOLLOW
	typ    uint32 // S_IFMT
	isRoot bool

	mu     sync.Mutex // guards open and the directory offset during Readdir
	open   int        // descriptor after Open, else -1
	writes bool       // open for writing
}

var _ p9.File = (*node)(nil)

func (t *tree) newNode(fd int, typ uint32, isRoot bool) (*node, error) {
	if t.live.Add(1) > t.max {
		t.live.Add(-1)
		unix.Close(fd)
		return nil, unix.ENFILE
	}
	return &node{t: t, fd: fd, typ: typ, isRoot: isRoot, open: -1}, nil
}

// visible reports whether name may be used in this directory: in a
// single-file export only that file's name exists in the root.
func (n *node) visible(name string) bool {
	return !n.isRoot || n.t.only == "" || name == n.t.only
}

// mutable guards every mutation of this directory's entries.
func (n *node) mutable(name string) error {
	if n.t.ro {
		return unix.EROFS
	}
	if err := checkName(name); err != nil {
		return err
	}
	if n.typ != unix.S_IFDIR {
		return unix.ENOTDIR
	}
	if n.isRoot && n.t.only != "" {
		return unix.EPERM // the single exported name is fixed
	}
	return nil
}

// child opens name below this directory as a new node.
func (n *node) child(name string) (*node, unix.Statx_t, error) {
	if err := checkName(name); err != nil {
		return nil, unix.Statx_t{}, err
	}
	if n.typ != unix.S_IFDIR {
		return nil, unix.Statx_t{}, unix.ENOTDIR
	}
	if !n.visible(name) {
		return nil, unix.Statx_t{}, unix.ENOENT
	}
	fd, err := openBeneath(n.fd, name, unix.O_PATH, 0)
	if err != nil {
		return nil, unix.Statx_t{}, err
	}
	st, err := statFD(fd)
	if err != nil {
		unix.Close(fd)
		return nil, unix.Statx_t{}, err
	}
	c, err := n.t.newNode(fd, fileType(st.Mode), false)
	return c, st, err
}

// Walk implements p9.File. The p9 server walks one name at a time; more
// are handled for completeness, each a directory but the last.
func (n *node) Walk(names []string) (_ []p9.QID, _ p9.File, err error) {
	defer wire(&err)
	if len(names) == 0 {
		fd, err := unix.FcntlInt(uintptr(n.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, nil, err
		}
		c, err := n.t.newNode(fd, n.typ, n.isRoot)
		return nil, c, err
	}
	qids := make([]p9.QID, 0, len(names))
	cur := n
	for _, name := range names {
		c, st, err := cur.child(name)
		if cur != n {
			cur.Close()
		}
		if err != nil {
			return nil, nil, err
		}
		qids = append(qids, n.t.qid(&st))
		cur = c
	}
	return qids, cur, nil
}

// WalkGetAttr implements p9.File: one walk and its attributes.
func (n *node) WalkGetAttr(names []string) (_ []p9.QID, _ p9.File, _ p9.AttrMask, _ p9.Attr, err error) {
	defer wire(&err)
	if len(names) != 1 {
		return nil, nil, p9.AttrMask{}, p9.Attr{}, unix.ENOSYS
	}
	c, st, err := n.child(names[0])
	if err != nil {
		return nil, nil, p9.AttrMask{}, p9.Attr{}, err
	}
	mask, attr := attrOf(&st)
	return []p9.QID{n.t.qid(&st)}, c, mask, attr, nil
}

// GetAttr implements p9.File.
func (n *node) GetAttr(p9.AttrMask) (_ p9.QID, _ p9.AttrMask, _ p9.Attr, err error) {
	defer wire(&err)
	st, err := statFD(n.fd)
	if err != nil {
		return p9.QID{}, p9.AttrMask{}, p9.Attr{}, err
	}
	mask, attr := attrOf(&st)
	return n.t.qid(&st), mask, attr, nil
}

// openFlags keeps what may pass from the peer to open(2): the access
// mode and a few data flags, nothing that changes resolution.
const openFlags = unix.O_ACCMODE | unix.O_TRUNC | unix.O_APPEND | unix.O_DSYNC | unix.O_SYNC

func (n *node) checkOpen(flags p9.OpenFlags) (int, error) {
	f := int(flags) & openFlags
	if n.t.ro && (f&unix.O_ACCMODE != unix.O_RDONLY || f&(unix.O_TRUNC|unix.O_APPEND) != 0) {
		return 0, unix.EROFS
	}
	return f, nil
}

// Open implements p9.File. Only regular files and directories open: a
// symlink is never followed, and device nodes, FIFOs and sockets stay
// closed (opening one could reach outside the tree or block the export).
func (n *node) Open(flags p9.OpenFlags) (_ p9.QID, _ uint32, err error) {
	defer wire(&err)
	f, err := n.checkOpen(flags)
	if err != nil {
		return p9.QID{}, 0, err
	}
	switch n.typ {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		if f&unix.O_ACCMODE != unix.O_RDONLY {
			return p9.QID{}, 0, unix.EISDIR
		}
		f = unix.O_RDONLY | unix.O_DIRECTORY
	case unix.S_IFLNK:
		return p9.QID{}, 0, unix.ELOOP
	default:
		return p9.QID{}, 0, unix.EPERM
	}
	st, err := statFD(n.fd)
	if err != nil {
		return p9.QID{}, 0, err
	}
	fd, err := n.t.reopen(n.fd, f)
	if err != nil {
		return p9.QID{}, 0, err
	}
	n.mu.Lock()
	if n.open >= 0 {
		unix.Close(n.open)
	}
	n.open, n.writes = fd, f&unix.O_ACCMODE != unix.O_RDONLY
	n.mu.Unlock()
	return n.t.qid(&st), 0, nil
}

func (n *node) openFD() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.open < 0 {
		return -1, unix.EBADF
	}
	return n.open, nil
}

// ReadAt implements p9.File.
func (n *node) ReadAt(p []byte, off int64) (_ int, err error) {
	defer wire(&err)
	fd, err := n.openFD()
	if err != nil {
		return 0, err
	}
	total := 0
	for total < len(p) {
		m, err := unix.Pread(fd, p[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		if m == 0 {
			return total, io.EOF
		}
		total += m
	}
	return total, nil
}

// WriteAt implements p9.File.
func (n *node) WriteAt(p []byte, off int64) (_ int, err error) {
	defer wire(&err)
	if n.t.ro {
		return 0, unix.EROFS
	}
	fd, err := n.openFD()
	if err != nil {
		return 0, err
	}
	total := 0
	for total < len(p) {
		m, err := unix.Pwrite(fd, p[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		total += m
	}
	return total, nil
}

// FSync implements p9.File.
func (n *node) FSync() (err error) {
	defer wire(&err)
	fd, err := n.openFD()
	if err != nil {
		return err
	}
	return unix.Fsync(fd)
}

// StatFS implements p9.File.
func (n *node) StatFS() (_ p9.FSStat, err error) {
	defer wire(&err)
	var s unix.Statfs_t
	if err := unix.Fstatfs(n.fd, &s); err != nil {
		return p9.FSStat{}, err
	}
	return p9.FSStat{
		Type:            uint32(s.Type),
		BlockSize:       uint32(s.Bsize),
		Blocks:          s.Blocks,
		BlocksFree:      s.Bfree,
		BlocksAvailable: s.Bavail,
		Files:           s.Files,
		FilesFree:       s.Ffree,
		FSID:            uint64(uint32(s.Fsid.Val[0])) | uint64(uint32(s.Fsid.Val[1]))<<32,
		NameLength:      uint32(s.Namelen),
	}, nil
}

// Readlink implements p9.File: the link's text, never its target.
func (n *node) Readlink() (_ string, err error) {
	defer wire(&err)
	if n.typ != unix.S_IFLNK {
		return "", unix.EINVAL
	}
	buf := make([]byte, unix.PathMax)
	m, err := unix.Readlinkat(n.fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:m]), nil
}

// Close implements p9.File.
func (n *node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.open >= 0 {
		unix.Close(n.open)
		n.open = -1
	}
	if n.fd >= 0 {
		unix.Close(n.fd)
		n.fd = -1
		n.t.live.Add(-1)
	}
	return nil
}

// Renamed implements p9.File: nodes hold descriptors, not paths, so a
// rename changes nothing here.
func (n *node) Renamed(p9.File, string) {}

// Rename implements p9.File; the server always uses RenameAt.
func (n *node) Rename(p9.File, string) error { return unix.ENOSYS }
