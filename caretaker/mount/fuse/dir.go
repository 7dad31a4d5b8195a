package fuse

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hugelgupf/p9/p9"
)

const (
	// dirBatch is the byte count asked of one Treaddir.
	dirBatch = 64 << 10
	// lookahead is how many entries ahead of the kernel a READDIRPLUS
	// listing walks, in parallel.
	lookahead = 256
)

// dir is an open directory: its own opened fid and a batch of entries.
// Once the kernel asks for entries with attributes (READDIRPLUS), the
// attributes of the batch's entries are asked for ahead, MaxNames to a
// Tstatdir (p9x); an export that does not speak it gets the next entries
// walked ahead in parallel instead. Either way a listing costs about one
// round trip per batch rather than one per entry.
type dir struct {
	n *node
	f *fid

	mu     sync.Mutex
	buf    []p9.Dirent
	off    uint64 // export offset to read the next batch from
	done   bool
	plus   bool               // the kernel wants attributes
	issued int                // entries at the front of buf already walked ahead
	ahead  map[string]*walked // walks ahead, by name
}

// walked is one walk ahead, done when ready is closed. f is nil when the
// attributes came from a Tstatdir (no walk yet).
type walked struct {
	ready chan struct{}
	qids  []p9.QID
	f     p9.File
	mask  p9.AttrMask
	attr  p9.Attr
	err   error
}

var (
	_ fs.FileReaddirenter = (*dir)(nil)
	_ fs.FileSeekdirer    = (*dir)(nil)
	_ fs.FileLookuper     = (*dir)(nil)
	_ fs.FileReleasedirer = (*dir)(nil)
	_ fs.FileFsyncdirer   = (*dir)(nil)
)

// OpendirHandle implements fs.NodeOpendirHandler.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	f, err := n.openFid(p9.ReadOnly)
	if err != nil {
		return nil, 0, errno(err)
	}
	return &dir{n: n, f: &fid{f: f}}, 0, 0
}

// Readdirent implements fs.FileReaddirenter.
func (d *dir) Readdirent(ctx context.Context) (*gofuse.DirEntry, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.buf) == 0 && !d.done {
		ents, err := d.f.f.Readdir(d.off, dirBatch)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, errno(err)
		}
		d.buf, d.done, d.issued = ents, len(ents) == 0, 0
	}
	if len(d.buf) == 0 {
		return nil, 0
	}
	e := d.buf[0]
	d.buf = d.buf[1:]
	d.issued = max(d.issued-1, 0)
	d.off = e.Offset
	d.walkAhead()
	// The export sends d_type, which is the file type bits shifted down.
	return &gofuse.DirEntry{Name: e.Name, Ino: ino(e.QID.Path), Mode: uint32(e.Type) << 12, Off: e.Offset}, 0
}

// walkAhead starts walks for the entries the kernel will ask about next.
// Called with d.mu held.
func (d *dir) walkAhead() {
	if !d.plus {
		return
	}
	if d.ahead == nil {
		d.ahead = map[string]*walked{}
	}
	if d.n.m.conn.Speaks() {
		d.statAhead()
		return
	}
	for ; d.issued < min(lookahead, len(d.buf)); d.issued++ {
		name := d.buf[d.issued].Name
		if _, ok := d.ahead[name]; ok {
			continue
		}
		w := &walked{ready: make(chan struct{})}
		d.ahead[name] = w
		go func() {
			defer close(w.ready)
			d.n.m.prefetch <- struct{}{}
			defer func() { <-d.n.m.prefetch }()
			w.err = d.n.do(func(f p9.File) (err error) {
				w.qids, w.f, w.mask, w.attr, err = f.WalkGetAttr([]string{name})
				return err
			})
		}()
	}
}

// discardAhead drops the walks ahead nobody asked for. Called with d.mu
// held.
func (d *dir) discardAhead() {
	for name, w := range d.ahead {
		delete(d.ahead, name)
		go func() {
			<-w.ready
			if w.err == nil && w.f != nil {
				w.f.Close()
			}
		}()
	}
	d.issued = 0
}

// Seekdir implements fs.FileSeekdirer: offsets are the export's own.
func (d *dir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.discardAhead()
	d.off, d.buf, d.done = off, nil, false
	return 0
}

// Lookup implements fs.FileLookuper, for READDIRPLUS: the entry just
// returned by Readdirent, from its walk ahead when there is one.
func (d *dir) Lookup(ctx context.Context, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	d.mu.Lock()
	if !d.plus {
		d.plus = true
		d.walkAhead()
	}
	w := d.ahead[name]
	delete(d.ahead, name)
	d.mu.Unlock()
	if w == nil {
		return d.n.Lookup(ctx, name, out)
	}
	<-w.ready
	if errors.Is(w.err, errWalk) {
		return d.n.Lookup(ctx, name, out)
	}
	if w.err != nil {
		return nil, errno(w.err)
	}
	if len(w.qids) != 1 {
		if w.f != nil {
			w.f.Close()
		}
		return nil, syscall.EIO
	}
	return d.n.adopt(ctx, name, w.qids[0], w.f, w.mask, w.attr, out), 0
}

// Releasedir implements fs.FileReleasedirer.
func (d *dir) Releasedir(ctx context.Context, flags uint32) {
	d.mu.Lock()
	d.discardAhead()
	d.mu.Unlock()
	d.f.close()
}

// Fsyncdir implements fs.FileFsyncdirer.
func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	return errno(d.f.f.FSync())
}
