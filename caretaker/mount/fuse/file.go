package fuse

import (
	"context"
	"errors"
	"io"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hugelgupf/p9/p9"
)

// handle is an open file: its own 9P fid, opened.
type handle struct {
	f *fid
}

var (
	_ fs.FileReader    = (*handle)(nil)
	_ fs.FileWriter    = (*handle)(nil)
	_ fs.FileFsyncer   = (*handle)(nil)
	_ fs.FileFlusher   = (*handle)(nil)
	_ fs.FileReleaser  = (*handle)(nil)
	_ fs.FileGetattrer = (*handle)(nil)
)

// openFlags is what passes to the export's open(2).
const openFlags = syscall.O_ACCMODE | syscall.O_TRUNC | syscall.O_APPEND | syscall.O_DSYNC | syscall.O_SYNC

// Open implements fs.NodeOpener: a clone of the node's fid, opened. The
// page cache is kept across opens; the kernel drops it when the size or
// mtime it sees on a (≤1 s stale) attribute refresh changed.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	f, err := n.openFid(p9.OpenFlags(flags & openFlags))
	if err != nil {
		return nil, 0, errno(err)
	}
	return &handle{f: &fid{f: f}}, gofuse.FOPEN_KEEP_CACHE, 0
}

func (n *node) openFid(flags p9.OpenFlags) (p9.File, error) {
	if n.s.p.Load() == nil {
		// No walked fid (a listing brought the node, or the budget took
		// it back): the walk from the parent is the fid to open, one round
		// trip less than walking the node's own and cloning it.
		if f, err := n.walkName(); err == nil {
			if _, _, err := f.Open(flags); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
	}
	var opened p9.File
	err := n.do(func(nf p9.File) error {
		_, f, err := nf.Walk(nil)
		if err != nil {
			return err
		}
		if _, _, err := f.Open(flags); err != nil {
			f.Close()
			return err
		}
		opened = f
		return nil
	})
	return opened, err
}

// Read implements fs.FileReader.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (gofuse.ReadResult, syscall.Errno) {
	m, err := h.f.f.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, errno(err)
	}
	return gofuse.ReadResultData(dest[:m]), 0
}

// Write implements fs.FileWriter.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	m, err := h.f.f.WriteAt(data, off)
	if err != nil {
		return uint32(m), errno(err)
	}
	return uint32(m), 0
}

// Fsync implements fs.FileFsyncer.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return errno(h.f.f.FSync())
}

// Flush implements fs.FileFlusher: writes are synchronous, nothing to do.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

// Release implements fs.FileReleaser.
func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.f.close()
	return 0
}

// Getattr implements fs.FileGetattrer.
func (h *handle) Getattr(ctx context.Context, out *gofuse.AttrOut) syscall.Errno {
	qid, _, a, err := h.f.f.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return errno(err)
	}
	fillAttr(&out.Attr, qid, a)
	return 0
}
