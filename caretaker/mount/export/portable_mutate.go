package export

import (
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// mutable guards every mutation of this directory's entries, returning
// the directory's root.
func (n *pnode) mutable(name string) (*os.Root, error) {
	if n.t.ro {
		return nil, linux.EROFS
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	r, err := n.dirRoot()
	if err != nil {
		return nil, err
	}
	if n.isRoot && n.t.only != "" {
		return nil, linux.EPERM // the single exported name is fixed
	}
	return r, nil
}

// osPerm converts 9P permission bits, keeping what createPerm keeps (and
// set-group-id where keepSetgid).
func osPerm(perm p9.FileMode, keepSetgid bool) fs.FileMode {
	m := fs.FileMode(perm & 0o777)
	if perm&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	if keepSetgid && perm&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	return m
}

// Create implements p9.File: name is created below this directory and
// returned open. The peer's uid and gid are ignored: new files belong to
// whoever runs the export.
func (n *pnode) Create(name string, flags p9.OpenFlags, perm p9.FileMode, _ p9.UID, _ p9.GID) (_ p9.File, _ p9.QID, _ uint32, err error) {
	defer wirePortable(&err)
	r, err := n.mutable(name)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	f, err := n.osFlags(flags)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	// Always exclusive (os.Root then follows nothing): an existing name is
	// opened by Open's rules.
	file, err := r.OpenFile(name, f|os.O_CREATE|os.O_EXCL, osPerm(perm, false))
	if os.IsExist(err) && int(flags)&lxExcl == 0 {
		return n.openExisting(name, flags)
	}
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, p9.QID{}, 0, err
	}
	n.mu.Lock()
	c := &pnode{parent: n.dir.hold(), name: name, rel: path.Join(n.rel, name), file: file,
		writes: flags.Mode() != p9.ReadOnly, appnd: flags&lxAppend != 0}
	n.mu.Unlock()
	if c, err = n.t.newNode(c); err != nil {
		return nil, p9.QID{}, 0, err
	}
	return c, n.t.qid(fi, c.rel), 0, nil
}

// lxExcl is O_EXCL as 9P2000.L carries it.
const lxExcl = 0o200

func (n *pnode) openExisting(name string, flags p9.OpenFlags) (p9.File, p9.QID, uint32, error) {
	c, _, err := n.child(name)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	if !c.typ.IsRegular() {
		c.Close()
		return nil, p9.QID{}, 0, linux.EEXIST
	}
	qid, _, err := c.Open(flags)
	if err != nil {
		c.Close()
		return nil, p9.QID{}, 0, err
	}
	return c, qid, 0, nil
}

func (n *pnode) qidAt(r *os.Root, name string) (p9.QID, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return p9.QID{}, err
	}
	return n.t.qid(fi, path.Join(n.relPath(), name)), nil
}

// Mkdir implements p9.File.
func (n *pnode) Mkdir(name string, perm p9.FileMode, _ p9.UID, _ p9.GID) (_ p9.QID, err error) {
	defer wirePortable(&err)
	r, err := n.mutable(name)
	if err != nil {
		return p9.QID{}, err
	}
	// Set-group-id on a directory only steers group inheritance: kept.
	if err := r.Mkdir(name, osPerm(perm, true)); err != nil {
		return p9.QID{}, err
	}
	return n.qidAt(r, name)
}

// Symlink implements p9.File: the link is stored as text; the export never
// follows it. (Windows lets only an administrator or Developer Mode make
// one.)
func (n *pnode) Symlink(target, name string, _ p9.UID, _ p9.GID) (_ p9.QID, err error) {
	defer wirePortable(&err)
	r, err := n.mutable(name)
	if err != nil {
		return p9.QID{}, err
	}
	if err := checkTarget(target); err != nil {
		return p9.QID{}, err
	}
	if err := r.Symlink(target, name); err != nil {
		return p9.QID{}, err
	}
	return n.qidAt(r, name)
}

// Link implements p9.File. The target is a node of this export, so the new
// name can only point at a file already inside the tree.
func (n *pnode) Link(target p9.File, name string) (err error) {
	defer wirePortable(&err)
	if _, err := n.mutable(name); err != nil {
		return err
	}
	tn, ok := target.(*pnode)
	if !ok || tn.t != n.t {
		return linux.EXDEV
	}
	if tn.typ.IsDir() {
		return linux.EPERM
	}
	return n.t.root.r.Link(tn.relPath(), path.Join(n.relPath(), name))
}

// Mknod implements p9.File: regular files, and FIFOs and sockets where
// the system makes them below a descriptor (Linux: mknodat; macOS has no
// mknodat, Windows neither kind); device nodes are refused.
func (n *pnode) Mknod(name string, mode p9.FileMode, _, _ uint32, _ p9.UID, _ p9.GID) (_ p9.QID, err error) {
	defer wirePortable(&err)
	r, err := n.mutable(name)
	if err != nil {
		return p9.QID{}, err
	}
	switch mode & p9.FileModeMask {
	case 0, p9.ModeRegular:
	case p9.ModeNamedPipe, p9.ModeSocket:
		if err := mknodAt(r, name, uint32(mode&(p9.FileModeMask|createPerm))); err != nil {
			return p9.QID{}, err
		}
		return n.qidAt(r, name)
	default:
		return p9.QID{}, linux.EPERM
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, osPerm(mode, false))
	if err != nil {
		return p9.QID{}, err
	}
	if err := f.Close(); err != nil {
		return p9.QID{}, err
	}
	return n.qidAt(r, name)
}

// RenameAt implements p9.File: both names are single components below
// directories of this export (rename never follows a link).
func (n *pnode) RenameAt(oldName string, newDir p9.File, newName string) (err error) {
	defer wirePortable(&err)
	r, err := n.mutable(oldName)
	if err != nil {
		return err
	}
	nd, ok := newDir.(*pnode)
	if !ok || nd.t != n.t {
		return linux.EXDEV
	}
	if _, err := nd.mutable(newName); err != nil {
		return err
	}
	if nd == n {
		return r.Rename(oldName, newName)
	}
	return n.t.root.r.Rename(path.Join(n.relPath(), oldName), path.Join(nd.relPath(), newName))
}

// UnlinkAt implements p9.File.
func (n *pnode) UnlinkAt(name string, flags uint32) (err error) {
	defer wirePortable(&err)
	r, err := n.mutable(name)
	if err != nil {
		return err
	}
	fi, err := r.Lstat(name)
	if err != nil {
		return err
	}
	const atRemoveDir = 0x200
	switch rmdir := flags&atRemoveDir != 0; {
	case rmdir && !fi.IsDir():
		return linux.ENOTDIR
	case !rmdir && fi.IsDir():
		return linux.EISDIR
	}
	return r.Remove(name)
}

// SetAttr implements p9.File.
func (n *pnode) SetAttr(valid p9.SetAttrMask, attr p9.SetAttr) (err error) {
	defer wirePortable(&err)
	if n.t.ro {
		return linux.EROFS
	}
	if n.isRoot && n.t.only != "" {
		return linux.EPERM
	}
	r, name := n.at()
	if valid.Size {
		if err := n.truncate(int64(attr.Size)); err != nil {
			return err
		}
	}
	if valid.Permissions {
		if err := n.chmod(r, name, uint32(attr.Permissions)); err != nil {
			return err
		}
	}
	if valid.UID || valid.GID {
		uid, gid := owners(valid, attr)
		if err := r.Lchown(name, uid, gid); err != nil {
			return err
		}
	}
	if valid.ATime || valid.MTime {
		return n.utimes(r, name, valid, attr)
	}
	return nil
}

func (n *pnode) truncate(size int64) error {
	if !n.typ.IsRegular() {
		if n.typ.IsDir() {
			return linux.EISDIR
		}
		return linux.EINVAL
	}
	n.mu.Lock()
	f, writes := n.file, n.writes
	n.mu.Unlock()
	if f != nil && writes {
		return f.Truncate(size)
	}
	f, _, err := n.openFile(p9.WriteOnly)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(size)
}

// chmod refuses set-user-id anywhere and set-group-id on files (see
// createPerm), and symlinks (whose own mode Linux does not keep).
func (n *pnode) chmod(r *os.Root, name string, mode uint32) error {
	switch {
	case mode&0o4000 != 0 || mode&0o2000 != 0 && !n.typ.IsDir():
		return linux.EPERM
	case n.typ&fs.ModeSymlink != 0:
		return linux.EOPNOTSUPP
	}
	return r.Chmod(name, osPerm(p9.FileMode(mode), true))
}

// utimes sets times; os.Root's Chtimes follows a final symlink, so a
// link's own times are not set here.
func (n *pnode) utimes(r *os.Root, name string, valid p9.SetAttrMask, attr p9.SetAttr) error {
	if n.typ&fs.ModeSymlink != 0 {
		return linux.EOPNOTSUPP
	}
	var at, mt time.Time // zero: left as it is
	now := time.Now()
	if valid.ATime {
		at = now
		if valid.ATimeNotSystemTime {
			at = time.Unix(int64(attr.ATimeSeconds), int64(attr.ATimeNanoSeconds))
		}
	}
	if valid.MTime {
		mt = now
		if valid.MTimeNotSystemTime {
			mt = time.Unix(int64(attr.MTimeSeconds), int64(attr.MTimeNanoSeconds))
		}
	}
	return r.Chtimes(name, at, mt)
}
