package export

import (
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

var _ p9.File = (*pnode)(nil)

// visible reports whether name may be used in this directory: in a
// single-file export only that file's name exists in the root.
func (n *pnode) visible(name string) bool {
	return !n.isRoot || n.t.only == "" || name == n.t.only
}

// dirRoot is this directory's root, or ENOTDIR.
func (n *pnode) dirRoot() (*os.Root, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dir == nil {
		if n.parent == nil {
			return nil, linux.EBADF
		}
		return nil, linux.ENOTDIR
	}
	return n.dir.r, nil
}

// child resolves name below this directory, one component, no link
// followed: a directory is opened as its own root and must be the very
// directory Lstat saw (not a link swapped in since).
func (n *pnode) child(name string) (*pnode, fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	r, err := n.dirRoot()
	if err != nil {
		return nil, nil, err
	}
	if !n.visible(name) {
		return nil, nil, linux.ENOENT
	}
	fi, err := r.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	c := &pnode{rel: path.Join(n.relPath(), name), typ: fi.Mode().Type()}
	if !fi.IsDir() {
		n.mu.Lock()
		c.parent, c.name = n.dir.hold(), name
		n.mu.Unlock()
		c, err := n.t.newNode(c)
		return c, fi, err
	}
	sub, err := r.OpenRoot(name)
	if err != nil {
		return nil, nil, err
	}
	if got, err := sub.Lstat("."); err != nil || !os.SameFile(fi, got) {
		if err == nil {
			err = linux.ELOOP // a link swapped in after the Lstat, followed
		}
		sub.Close()
		return nil, nil, err
	}
	c.dir = newDirRef(sub)
	c, err = n.t.newNode(c)
	return c, fi, err
}

// same checks that what was opened is the file fi describes: a name
// replaced by a symlink between the two was followed, which the export
// never does.
func same(fi, got fs.FileInfo) error {
	if !os.SameFile(fi, got) {
		return linux.ELOOP
	}
	return nil
}

// Walk implements p9.File. The p9 server walks one name at a time; more
// are handled for completeness, each a directory but the last.
func (n *pnode) Walk(names []string) (_ []p9.QID, _ p9.File, err error) {
	defer wirePortable(&err)
	if len(names) == 0 {
		c := &pnode{rel: n.relPath(), typ: n.typ, isRoot: n.isRoot}
		n.mu.Lock()
		switch {
		case n.dir != nil:
			c.dir = n.dir.hold()
		case n.parent != nil:
			c.parent, c.name = n.parent.hold(), n.name
		default:
			n.mu.Unlock()
			return nil, nil, linux.EBADF
		}
		n.mu.Unlock()
		c, err := n.t.newNode(c)
		return nil, c, err
	}
	qids := make([]p9.QID, 0, len(names))
	cur := n
	for _, name := range names {
		c, fi, err := cur.child(name)
		if cur != n {
			cur.Close()
		}
		if err != nil {
			return nil, nil, err
		}
		qids = append(qids, n.t.qid(fi, c.rel))
		cur = c
	}
	return qids, cur, nil
}

// WalkGetAttr implements p9.File: one walk and its attributes.
func (n *pnode) WalkGetAttr(names []string) (_ []p9.QID, _ p9.File, _ p9.AttrMask, _ p9.Attr, err error) {
	defer wirePortable(&err)
	if len(names) != 1 {
		return nil, nil, p9.AttrMask{}, p9.Attr{}, linux.ENOSYS
	}
	c, fi, err := n.child(names[0])
	if err != nil {
		return nil, nil, p9.AttrMask{}, p9.Attr{}, err
	}
	mask, attr := attrOfInfo(fi)
	return []p9.QID{n.t.qid(fi, c.rel)}, c, mask, attr, nil
}

func (n *pnode) lstat() (fs.FileInfo, error) {
	r, name := n.at()
	return r.Lstat(name)
}

// GetAttr implements p9.File.
func (n *pnode) GetAttr(p9.AttrMask) (_ p9.QID, _ p9.AttrMask, _ p9.Attr, err error) {
	defer wirePortable(&err)
	fi, err := n.lstat()
	if err != nil {
		return p9.QID{}, p9.AttrMask{}, p9.Attr{}, err
	}
	mask, attr := attrOfInfo(fi)
	return n.t.qid(fi, n.relPath()), mask, attr, nil
}

// Open flags as 9P2000.L carries them (Linux's values, whatever this
// system's are).
const (
	lxTrunc  = 0o1000
	lxAppend = 0o2000
	lxDsync  = 0o10000
)

func (n *pnode) osFlags(flags p9.OpenFlags) (int, error) {
	var f int
	switch flags.Mode() {
	case p9.ReadOnly:
		f = os.O_RDONLY
	case p9.WriteOnly:
		f = os.O_WRONLY
	case p9.ReadWrite:
		f = os.O_RDWR
	default:
		return 0, linux.EINVAL
	}
	if n.t.ro && (f != os.O_RDONLY || flags&(lxTrunc|lxAppend) != 0) {
		return 0, linux.EROFS
	}
	if flags&lxAppend != 0 {
		f |= os.O_APPEND
	}
	if flags&lxDsync != 0 { // O_SYNC includes O_DSYNC's bit
		f |= os.O_SYNC
	}
	return f, nil
}

// openFile opens the regular file the node names, checked to be the file
// Lstat saw (no link followed); truncation waits for that check.
func (n *pnode) openFile(flags p9.OpenFlags) (*os.File, fs.FileInfo, error) {
	f, err := n.osFlags(flags)
	if err != nil {
		return nil, nil, err
	}
	r, name := n.at()
	fi, err := r.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, typeErr(fi.Mode())
	}
	file, err := r.OpenFile(name, f, 0)
	if err != nil {
		return nil, nil, err
	}
	got, err := file.Stat()
	if err == nil {
		err = same(fi, got)
	}
	if err == nil && flags&lxTrunc != 0 {
		err = file.Truncate(0)
	}
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return file, fi, nil
}

// typeErr is why a file of this type does not open: a symlink is never
// followed; device nodes, FIFOs and sockets stay closed.
func typeErr(m fs.FileMode) error {
	switch {
	case m&fs.ModeSymlink != 0:
		return linux.ELOOP
	case m.IsDir():
		return linux.EISDIR
	}
	return linux.EPERM
}

// Open implements p9.File. Only regular files and directories open.
func (n *pnode) Open(flags p9.OpenFlags) (_ p9.QID, _ uint32, err error) {
	defer wirePortable(&err)
	var file *os.File
	var fi fs.FileInfo
	if n.typ.IsDir() {
		if flags.Mode() != p9.ReadOnly {
			return p9.QID{}, 0, linux.EISDIR
		}
		r, err := n.dirRoot()
		if err != nil {
			return p9.QID{}, 0, err
		}
		if file, err = r.Open("."); err != nil {
			return p9.QID{}, 0, err
		}
		if fi, err = file.Stat(); err != nil {
			file.Close()
			return p9.QID{}, 0, err
		}
	} else if file, fi, err = n.openFile(flags); err != nil {
		return p9.QID{}, 0, err
	}
	n.mu.Lock()
	if n.file != nil {
		n.file.Close()
	}
	n.file, n.ents = file, nil
	n.writes, n.appnd = flags.Mode() != p9.ReadOnly, flags&lxAppend != 0
	n.mu.Unlock()
	return n.t.qid(fi, n.relPath()), 0, nil
}

func (n *pnode) opened() (*os.File, bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.file == nil {
		return nil, false, linux.EBADF
	}
	return n.file, n.appnd, nil
}

// ReadAt implements p9.File.
func (n *pnode) ReadAt(p []byte, off int64) (_ int, err error) {
	defer wirePortable(&err)
	f, _, err := n.opened()
	if err != nil {
		return 0, err
	}
	return f.ReadAt(p, off)
}

// WriteAt implements p9.File. A file opened to append is written at its
// end, wherever the peer says (os.File refuses WriteAt there).
func (n *pnode) WriteAt(p []byte, off int64) (_ int, err error) {
	defer wirePortable(&err)
	if n.t.ro {
		return 0, linux.EROFS
	}
	f, appnd, err := n.opened()
	if err != nil {
		return 0, err
	}
	if appnd {
		return f.Write(p)
	}
	return f.WriteAt(p, off)
}

// FSync implements p9.File.
func (n *pnode) FSync() (err error) {
	defer wirePortable(&err)
	f, _, err := n.opened()
	if err != nil {
		return err
	}
	return f.Sync()
}

// StatFS implements p9.File.
func (n *pnode) StatFS() (_ p9.FSStat, err error) {
	defer wirePortable(&err)
	r, err := n.dirRootOrParent()
	if err != nil {
		return p9.FSStat{}, err
	}
	f, err := r.Open(".")
	if err != nil {
		return p9.FSStat{}, err
	}
	defer f.Close()
	return statFS(f)
}

func (n *pnode) dirRootOrParent() (*os.Root, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.dir != nil:
		return n.dir.r, nil
	case n.parent != nil:
		return n.parent.r, nil
	}
	return nil, linux.EBADF
}

// Readlink implements p9.File: the link's text, never its target.
func (n *pnode) Readlink() (_ string, err error) {
	defer wirePortable(&err)
	if n.typ&fs.ModeSymlink == 0 {
		return "", linux.EINVAL
	}
	r, name := n.at()
	return r.Readlink(name)
}

// Readdir implements p9.File: entries of the open directory from offset
// (0, or an entry's Offset from an earlier call), at most about count
// bytes of them. A Readdir from 0 lists the directory afresh; the offsets
// index that listing.
func (n *pnode) Readdir(offset uint64, count uint32) (_ p9.Dirents, err error) {
	defer wirePortable(&err)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.file == nil || n.dir == nil {
		return nil, linux.EBADF
	}
	if offset == 0 || n.ents == nil {
		f, err := n.dir.r.Open(".")
		if err != nil {
			return nil, err
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return nil, err
		}
		n.ents = ents[:0]
		for _, e := range ents {
			if checkName(e.Name()) == nil && n.visible(e.Name()) {
				n.ents = append(n.ents, e)
			}
		}
	}
	var out p9.Dirents
	size := 0
	for i := offset; i < uint64(len(n.ents)); i++ {
		e := n.ents[i]
		size += 24 + len(e.Name()) // qid 13, offset 8, type 1, name 2+len
		if size > int(count) && len(out) > 0 {
			break
		}
		qid := p9.QID{Type: p9.ModeFromOS(e.Type()).QIDType(), Path: pathID(path.Join(n.rel, e.Name()))}
		out = append(out, p9.Dirent{QID: qid, Offset: i + 1, Type: dirType(e.Type()), Name: e.Name()})
	}
	if len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// dirType is the dirent's type as Linux v9fs expects it: a d_type.
func dirType(m fs.FileMode) p9.QIDType {
	const dtFIFO, dtChr, dtDir, dtBlk, dtReg, dtLnk, dtSock = 1, 2, 4, 6, 8, 10, 12
	switch {
	case m.IsDir():
		return dtDir
	case m&fs.ModeSymlink != 0:
		return dtLnk
	case m&fs.ModeNamedPipe != 0:
		return dtFIFO
	case m&fs.ModeSocket != 0:
		return dtSock
	case m&fs.ModeCharDevice != 0:
		return dtChr
	case m&fs.ModeDevice != 0:
		return dtBlk
	}
	return dtReg
}
