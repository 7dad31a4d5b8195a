package fuse

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// atRemoveDir is unlinkat's AT_REMOVEDIR, as 9P2000.L carries it.
const atRemoveDir = 0x200

// created looks up a name this directory just made, for its inode.
func (n *node) created(ctx context.Context, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.Lookup(ctx, name, out)
}

// Create implements fs.NodeCreater.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *gofuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	// On the 9P client a create turns the fid it is called on into the
	// new, open file: create on a clone of the directory's fid.
	of := p9.OpenFlags(flags&openFlags | flags&syscall.O_EXCL)
	var f p9.File
	err := n.do(func(df p9.File) error {
		_, c, err := df.Walk(nil)
		if err != nil {
			return err
		}
		if _, _, _, err := c.Create(name, of, p9.FileMode(mode&07777), 0, 0); err != nil {
			c.Close()
			return err
		}
		f = c
		return nil
	})
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	h := &handle{f: &fid{f: f}}
	child, e := n.created(ctx, name, out)
	if e != 0 {
		h.f.close()
		return nil, nil, 0, e
	}
	return child, h, gofuse.FOPEN_KEEP_CACHE, 0
}

// Mkdir implements fs.NodeMkdirer.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if err := n.do(func(f p9.File) error { _, err := f.Mkdir(name, p9.FileMode(mode&07777), 0, 0); return err }); err != nil {
		return nil, errno(err)
	}
	return n.created(ctx, name, out)
}

// Mknod implements fs.NodeMknoder (FIFOs and sockets; the export refuses
// device nodes).
func (n *node) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	maj, min := unix.Major(uint64(dev)), unix.Minor(uint64(dev))
	if err := n.do(func(f p9.File) error { _, err := f.Mknod(name, p9.FileMode(mode), maj, min, 0, 0); return err }); err != nil {
		return nil, errno(err)
	}
	return n.created(ctx, name, out)
}

// Symlink implements fs.NodeSymlinker.
func (n *node) Symlink(ctx context.Context, target, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if err := n.do(func(f p9.File) error { _, err := f.Symlink(target, name, 0, 0); return err }); err != nil {
		return nil, errno(err)
	}
	return n.created(ctx, name, out)
}

// Link implements fs.NodeLinker.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, ok := target.(*node)
	if !ok {
		return nil, syscall.EXDEV
	}
	link := func(tf p9.File) error { return n.do(func(f p9.File) error { return f.Link(tf, name) }) }
	if err := t.do(link); err != nil {
		return nil, errno(err)
	}
	// Hand the target a fid walked by the new name: the usual next step
	// is unlinking the old one (git's and many editors' way to publish a
	// file), which would leave the old fid unopenable.
	var qids []p9.QID
	var f p9.File
	var mask p9.AttrMask
	var a p9.Attr
	err := n.do(func(df p9.File) (err error) {
		qids, f, mask, a, err = df.WalkGetAttr([]string{name})
		return err
	})
	if err != nil {
		return nil, errno(err)
	}
	if len(qids) != 1 {
		f.Close()
		return nil, syscall.EIO
	}
	if ino(qids[0].Path) == t.StableAttr().Ino {
		n.m.fids.install(t, f, false)
		fillAttr(&out.Attr, qids[0], a)
		return t.EmbeddedInode(), 0
	}
	return n.adopt(ctx, name, qids[0], f, mask, a, out), 0
}

// Unlink implements fs.NodeUnlinker.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return errno(n.do(func(f p9.File) error { return f.UnlinkAt(name, 0) }))
}

// Rmdir implements fs.NodeRmdirer.
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return errno(n.do(func(f p9.File) error { return f.UnlinkAt(name, atRemoveDir) }))
}

// Rename implements fs.NodeRenamer. 9P2000.L has no rename flags: a
// renameat2 with flags gets EINVAL, on which callers fall back.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if flags != 0 {
		return syscall.EINVAL
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	rename := func(nf p9.File) error {
		return n.do(func(f p9.File) error { return f.RenameAt(name, nf, newName) })
	}
	return errno(np.do(rename))
}
