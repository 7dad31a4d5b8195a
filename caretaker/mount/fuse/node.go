package fuse

import (
	"context"
	"errors"
	"runtime"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// node is one inode of the mount, holding a walked (unopened) 9P fid for
// it. The fid is clunked when the kernel forgets the inode, or, for a node
// go-fuse dropped in favour of an equal one, when it is collected.
type node struct {
	fs.Inode
	m *FS
	s *slot
}

var (
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeReadlinker     = (*node)(nil)
	_ fs.NodeStatfser       = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeOnForgetter    = (*node)(nil)
)

// newNode makes a node holding f; with f nil (attributes from a listing,
// no walk yet) it walks its name when first used.
func (m *FS) newNode(f p9.File, pinned bool) *node {
	n := &node{m: m, s: &slot{}}
	if f != nil {
		m.fids.install(n, f, pinned)
	}
	runtime.AddCleanup(n, func(s *slot) { s.close() }, n.s)
	return n
}

// OnForget implements fs.NodeOnForgetter.
func (n *node) OnForget() { n.m.fids.drop(n) }

// refresh walks the node's current name from its parent again and
// installs the new fid, if it still names the same inode.
func (n *node) refresh() error {
	f, err := n.walkName()
	if err != nil {
		return err
	}
	n.m.fids.install(n, f, false)
	return nil
}

// walkName walks the node's current name from its parent into a new fid,
// if it still names the same inode.
func (n *node) walkName() (p9.File, error) {
	name, parent := n.Parent()
	if parent == nil {
		return nil, syscall.ESTALE // unlinked, or the root
	}
	p, ok := parent.Operations().(*node)
	if !ok {
		return nil, syscall.ESTALE
	}
	var f p9.File
	var qids []p9.QID
	err := p.do(func(pf p9.File) (err error) {
		qids, f, err = pf.Walk([]string{name})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(qids) != 1 || ino(qids[0].Path) != n.StableAttr().Ino {
		f.Close()
		return nil, syscall.ESTALE
	}
	return f, nil
}

// do runs op on the node's walked fid: walked again first if the budget
// took it back, and once more after a fresh walk if the server refused it
// as stale (EINVAL: the name it was walked by is gone; EBADF: evicted
// while in use).
func (n *node) do(op func(p9.File) error) error {
	x := n.s.p.Load()
	if x == nil {
		if err := n.refresh(); err != nil {
			return err
		}
		if x = n.s.p.Load(); x == nil {
			return syscall.ESTALE
		}
	}
	n.m.fids.touch(n)
	err := op(x.f)
	if (errors.Is(err, linux.EINVAL) || errors.Is(err, linux.EBADF)) && n.refresh() == nil {
		if x = n.s.p.Load(); x != nil {
			err = op(x.f)
		}
	}
	return err
}

// stable is the identity go-fuse keys inodes by: the export's inode
// number, and its birth time as generation so that a reused inode number
// is a different inode.
func stable(qid p9.QID, mask p9.AttrMask, a p9.Attr) fs.StableAttr {
	st := fs.StableAttr{Mode: uint32(a.Mode) & syscall.S_IFMT, Ino: ino(qid.Path)}
	if mask.BTime {
		st.Gen = a.BTimeSeconds*1_000_000_000 + a.BTimeNanoSeconds
	}
	return st
}

// ino keeps clear of the inode numbers go-fuse reserves (0, 1, ^0).
func ino(path uint64) uint64 {
	if path <= 1 || path == ^uint64(0) {
		return path ^ 1<<62
	}
	return path
}

func fillAttr(out *gofuse.Attr, qid p9.QID, a p9.Attr) {
	out.Ino = ino(qid.Path)
	out.Size = a.Size
	out.Blocks = a.Blocks
	out.Atime, out.Atimensec = a.ATimeSeconds, uint32(a.ATimeNanoSeconds)
	out.Mtime, out.Mtimensec = a.MTimeSeconds, uint32(a.MTimeNanoSeconds)
	out.Ctime, out.Ctimensec = a.CTimeSeconds, uint32(a.CTimeNanoSeconds)
	out.Mode = uint32(a.Mode)
	out.Nlink = uint32(a.NLink)
	out.Uid, out.Gid = uint32(a.UID), uint32(a.GID)
	out.Rdev = uint32(a.RDev)
	out.Blksize = uint32(a.BlockSize)
}

// Lookup implements fs.NodeLookuper: one Twalkgetattr.
func (n *node) Lookup(ctx context.Context, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var qids []p9.QID
	var f p9.File
	var mask p9.AttrMask
	var a p9.Attr
	err := n.do(func(nf p9.File) (err error) {
		qids, f, mask, a, err = nf.WalkGetAttr([]string{name})
		return err
	})
	if err != nil {
		return nil, errno(err)
	}
	if len(qids) != 1 {
		f.Close()
		return nil, syscall.EIO
	}
	return n.adopt(ctx, name, qids[0], f, mask, a, out), 0
}

// adopt turns a freshly walked fid (or, nil, attributes a listing
// brought) into the child inode for name, reusing the inode already there
// when it is the same file.
func (n *node) adopt(ctx context.Context, name string, qid p9.QID, f p9.File, mask p9.AttrMask, a p9.Attr, out *gofuse.EntryOut) *fs.Inode {
	fillAttr(&out.Attr, qid, a)
	st := stable(qid, mask, a)
	if c := n.GetChild(name); c != nil && c.StableAttr() == st {
		if f == nil {
			return c
		}
		// The same file: keep the fresher fid (walked by a name that
		// exists now).
		if cn, ok := c.Operations().(*node); ok {
			n.m.fids.install(cn, f, false)
			return c
		}
		f.Close()
		return c
	}
	return n.NewInode(ctx, n.m.newNode(f, false), st)
}

// Getattr implements fs.NodeGetattrer.
func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *gofuse.AttrOut) syscall.Errno {
	var qid p9.QID
	var a p9.Attr
	getattr := func(f p9.File) (err error) {
		qid, _, a, err = f.GetAttr(p9.AttrMaskAll)
		return err
	}
	var err error
	if h, ok := fh.(*handle); ok {
		err = getattr(h.f.f)
	} else {
		err = n.do(getattr)
	}
	if err != nil {
		return errno(err)
	}
	fillAttr(&out.Attr, qid, a)
	return 0
}

// Setattr implements fs.NodeSetattrer: truncate, chmod, chown, times.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *gofuse.SetAttrIn, out *gofuse.AttrOut) syscall.Errno {
	var hf p9.File
	if h, ok := fh.(*handle); ok {
		hf = h.f.f // truncate through the open file, as ftruncate does
	}
	var valid p9.SetAttrMask
	var sa p9.SetAttr
	if mode, ok := in.GetMode(); ok {
		valid.Permissions, sa.Permissions = true, p9.FileMode(mode)
	}
	if uid, ok := in.GetUID(); ok {
		valid.UID, sa.UID = true, p9.UID(uid)
	}
	if gid, ok := in.GetGID(); ok {
		valid.GID, sa.GID = true, p9.GID(gid)
	}
	if size, ok := in.GetSize(); ok {
		valid.Size, sa.Size = true, size
	}
	if in.Valid&gofuse.FATTR_ATIME != 0 {
		valid.ATime = true
		if in.Valid&gofuse.FATTR_ATIME_NOW == 0 {
			valid.ATimeNotSystemTime, sa.ATimeSeconds, sa.ATimeNanoSeconds = true, in.Atime, uint64(in.Atimensec)
		}
	}
	if in.Valid&gofuse.FATTR_MTIME != 0 {
		valid.MTime = true
		if in.Valid&gofuse.FATTR_MTIME_NOW == 0 {
			valid.MTimeNotSystemTime, sa.MTimeSeconds, sa.MTimeNanoSeconds = true, in.Mtime, uint64(in.Mtimensec)
		}
	}
	if valid != (p9.SetAttrMask{}) {
		var err error
		if hf != nil {
			err = hf.SetAttr(valid, sa)
		} else {
			err = n.do(func(f p9.File) error { return f.SetAttr(valid, sa) })
		}
		if err != nil {
			return errno(err)
		}
	}
	return n.Getattr(ctx, fh, out)
}

// Readlink implements fs.NodeReadlinker.
func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	var target string
	err := n.do(func(f p9.File) (err error) {
		target, err = f.Readlink()
		return err
	})
	if err != nil {
		return nil, errno(err)
	}
	return []byte(target), 0
}

// Statfs implements fs.NodeStatfser.
func (n *node) Statfs(ctx context.Context, out *gofuse.StatfsOut) syscall.Errno {
	var s p9.FSStat
	err := n.do(func(f p9.File) (err error) {
		s, err = f.StatFS()
		return err
	})
	if err != nil {
		return errno(err)
	}
	*out = gofuse.StatfsOut{Blocks: s.Blocks, Bfree: s.BlocksFree, Bavail: s.BlocksAvailable, Files: s.Files, Ffree: s.FilesFree, Bsize: s.BlockSize, NameLen: s.NameLength, Frsize: s.BlockSize}
	return 0
}

// Fsync implements fs.NodeFsyncer (for a handle-less fsync and fsyncdir).
func (n *node) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	if h, ok := fh.(*handle); ok {
		return h.Fsync(ctx, flags)
	}
	return 0
}
