//go:build linux

package export

import (
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// Create implements p9.File: name is created below this directory and
// returned open. The peer's uid and gid are ignored: new files belong to
// whoever runs the export.
func (n *node) Create(name string, flags p9.OpenFlags, perm p9.FileMode, _ p9.UID, _ p9.GID) (_ p9.File, _ p9.QID, _ uint32, err error) {
	defer wire(&err)
	if err := n.mutable(name); err != nil {
		return nil, p9.QID{}, 0, err
	}
	f, err := n.checkOpen(flags)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	// Always exclusive: an existing name is opened by the same rules as
	// Open (so an existing device node or FIFO is never opened here).
	open, err := openBeneath(n.fd, name, f|unix.O_CREAT|unix.O_EXCL, uint32(perm)&createPerm)
	if err == unix.EEXIST && int(flags)&unix.O_EXCL == 0 {
		return n.openExisting(name, flags)
	}
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	// The node's O_PATH descriptor names the inode just opened, not
	// whatever the name points at by now.
	fd, err := n.t.reopen(open, unix.O_PATH)
	if err != nil {
		unix.Close(open)
		return nil, p9.QID{}, 0, err
	}
	st, err := statFD(fd)
	if err == nil && fileType(st.Mode) != unix.S_IFREG {
		err = unix.EEXIST
	}
	if err != nil {
		unix.Close(open)
		unix.Close(fd)
		return nil, p9.QID{}, 0, err
	}
	c, err := n.t.newNode(fd, unix.S_IFREG, false)
	if err != nil {
		unix.Close(open)
		return nil, p9.QID{}, 0, err
	}
	c.open, c.writes = open, f&unix.O_ACCMODE != unix.O_RDONLY
	return c, n.t.qid(&st), 0, nil
}

func (n *node) openExisting(name string, flags p9.OpenFlags) (p9.File, p9.QID, uint32, error) {
	c, _, err := n.child(name)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	if c.typ != unix.S_IFREG {
		c.Close()
		return nil, p9.QID{}, 0, unix.EEXIST
	}
	qid, _, err := c.Open(flags)
	if err != nil {
		c.Close()
		return nil, p9.QID{}, 0, err
	}
	return c, qid, 0, nil
}

// Mkdir implements p9.File.
func (n *node) Mkdir(name string, perm p9.FileMode, _ p9.UID, _ p9.GID) (_ p9.QID, err error) {
	defer wire(&err)
	if err := n.mutable(name); err != nil {
		return p9.QID{}, err
	}
	// Set-group-id on a directory only steers group inheritance: kept.
	if err := unix.Mkdirat(n.fd, name, uint32(perm)&(createPerm|unix.S_ISGID)); err != nil {
		return p9.QID{}, err
	}
	return n.qidAt(name)
}

func (n *node) qidAt(name string) (p9.QID, error) {
	st, err := statAt(n.fd, name)
	if err != nil {
		return p9.QID{}, err
	}
	return n.t.qid(&st), nil
}

// Symlink implements p9.File: the link is stored as text; the export never
// follows it.
func (n *node) Symlink(target, name string, _ p9.UID, _ p9.GID) (_ p9.QID, err error) {
	defer wire(&err)
	if err := n.mutable(name); err != nil {
		return p9.QID{}, err
	}
	if err := checkTarget(target); err != nil {
		return p9.QID{}, err
	}
	if err := unix.Symlinkat(target, n.fd, name); err != nil {
		return p9.QID{}, err
	}
	return n.qidAt(name)
}

// Link implements p9.File. The target is a node of this export (reached by
// walking from its root), so the new name can only point at an inode
// already inside the tree.
func (n *node) Link(target p9.File, name string) (err error) {
	defer wire(&err)
	if err := n.mutable(name); err != nil {
		return err
	}
	tn, ok := target.(*node)
	if !ok || tn.t != n.t {
		return unix.EXDEV
	}
	if tn.typ == unix.S_IFDIR {
		return unix.EPERM
	}
	err = unix.Linkat(tn.fd, "", n.fd, name, unix.AT_EMPTY_PATH)
	if err == unix.ENOENT || err == unix.EPERM {
		// AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH. The magic link names
		// the same inode (for a symlink, the link itself).
		err = unix.Linkat(unix.AT_FDCWD, procPath(tn.fd), n.fd, name, unix.AT_SYMLINK_FOLLOW)
	}
	return err
}

// Mknod implements p9.File: FIFOs, sockets and regular files only; device
// nodes are refused.
func (n *node) Mknod(name string, mode p9.FileMode, _, _ uint32, _ p9.UID, _ p9.GID) (_ p9.QID, err error) {
	defer wire(&err)
	if err := n.mutable(name); err != nil {
		return p9.QID{}, err
	}
	switch uint32(mode) & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFREG, 0:
	default:
		return p9.QID{}, unix.EPERM
	}
	if err := unix.Mknodat(n.fd, name, uint32(mode)&(unix.S_IFMT|createPerm), 0); err != nil {
		return p9.QID{}, err
	}
	return n.qidAt(name)
}

// RenameAt implements p9.File: both names are single components below
// directory descriptors of this export.
func (n *node) RenameAt(oldName string, newDir p9.File, newName string) (err error) {
	defer wire(&err)
	if err := n.mutable(oldName); err != nil {
		return err
	}
	nd, ok := newDir.(*node)
	if !ok || nd.t != n.t {
		return unix.EXDEV
	}
	if err := nd.mutable(newName); err != nil {
		return err
	}
	return unix.Renameat(n.fd, oldName, nd.fd, newName)
}

// UnlinkAt implements p9.File.
func (n *node) UnlinkAt(name string, flags uint32) (err error) {
	defer wire(&err)
	if err := n.mutable(name); err != nil {
		return err
	}
	return unix.Unlinkat(n.fd, name, int(flags)&unix.AT_REMOVEDIR)
}

// SetAttr implements p9.File.
func (n *node) SetAttr(valid p9.SetAttrMask, attr p9.SetAttr) (err error) {
	defer wire(&err)
	if n.t.ro {
		return unix.EROFS
	}
	if n.isRoot && n.t.only != "" {
		return unix.EPERM
	}
	if valid.Size {
		if err := n.truncate(int64(attr.Size)); err != nil {
			return err
		}
	}
	if valid.Permissions {
		if err := n.chmod(uint32(attr.Permissions)); err != nil {
			return err
		}
	}
	if valid.UID || valid.GID {
		uid, gid := owners(valid, attr)
		if err := unix.Fchownat(n.fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
	}
	if valid.ATime || valid.MTime {
		return n.utimes(valid, attr)
	}
	return nil
}

func (n *node) truncate(size int64) error {
	switch n.typ {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return unix.EISDIR
	default:
		return unix.EINVAL
	}
	n.mu.Lock()
	fd, writes := n.open, n.writes
	n.mu.Unlock()
	if fd >= 0 && writes {
		return unix.Ftruncate(fd, size)
	}
	fd, err := n.t.reopen(n.fd, unix.O_WRONLY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Ftruncate(fd, size)
}

// chmod refuses set-user-id anywhere and set-group-id on files, for the
// reason createPerm gives.
func (n *node) chmod(mode uint32) error {
	if mode&unix.S_ISUID != 0 || mode&unix.S_ISGID != 0 && n.typ != unix.S_IFDIR {
		return unix.EPERM
	}
	if n.typ == unix.S_IFLNK {
		return unix.EOPNOTSUPP // Linux symlinks have no mode of their own
	}
	// Through the magic link: the exact inode, no path resolved again.
	return unix.Fchmodat(unix.AT_FDCWD, procPath(n.fd), mode&0o7777, 0)
}

func (n *node) utimes(valid p9.SetAttrMask, attr p9.SetAttr) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
	if valid.ATime {
		ts[0] = unix.Timespec{Nsec: unix.UTIME_NOW}
		if valid.ATimeNotSystemTime {
			ts[0] = unix.Timespec{Sec: int64(attr.ATimeSeconds), Nsec: int64(attr.ATimeNanoSeconds)}
		}
	}
	if valid.MTime {
		ts[1] = unix.Timespec{Nsec: unix.UTIME_NOW}
		if valid.MTimeNotSystemTime {
			ts[1] = unix.Timespec{Sec: int64(attr.MTimeSeconds), Nsec: int64(attr.MTimeNanoSeconds)}
		}
	}
	err := unix.UtimesNanoAt(n.fd, "", ts, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.EINVAL && n.typ != unix.S_IFLNK {
		err = unix.UtimesNanoAt(unix.AT_FDCWD, procPath(n.fd), ts, 0)
	}
	return err
}
