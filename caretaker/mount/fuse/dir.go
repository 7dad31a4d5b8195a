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

// dir is an open directory and a batch of its entries. From an export
// that speaks Tlistdir (p9x) a batch comes with the entries' attributes,
// by the directory's path, and needs no fid (listed). Otherwise the
// directory is opened as a fid and read by Treaddir, and once the kernel
// asks for entries with attributes (READDIRPLUS) the next entries are
// walked ahead in parallel. Either way a listing costs about one round
// trip per batch rather than one per entry.
type dir struct {
	n      *node
	listed bool // batches by Tlistdir, until the export refuses it

	mu     sync.Mutex
	f      *fid // opened on first need when listed
	buf    []p9.Dirent
	off    uint64 // export offset to read the next batch from
	eof    bool   // the listing ends with buf
	done   bool
	plus   bool               // the kernel wants attributes
	issued int                // entries at the front of buf already walked ahead
	ahead  map[string]*walked // walks ahead, by name
}

// walked is one walk ahead, done when ready is closed. f is nil when the
// attributes came from a Tlistdir (no walk yet).
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
	if n.m.conn.Speaks() {
		return &dir{n: n, listed: true}, 0, 0
	}
	d := &dir{n: n}
	if err := d.open(); err != nil {
		return nil, 0, errno(err)
	}
	return d, 0, 0
}

// open gives d a fid of its own, opened. Called with d.mu held, or before
// d is shared.
func (d *dir) open() error {
	if d.f != nil {
		return nil
	}
	f, err := d.n.openFid(p9.ReadOnly)
	if err != nil {
		return err
	}
	d.f = &fid{f: f}
	return nil
}

// Readdirent implements fs.FileReaddirenter.
func (d *dir) Readdirent(ctx context.Context) (*gofuse.DirEntry, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.buf) == 0 && !d.done {
		if err := d.next(); err != nil {
			return nil, errno(err)
		}
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

// next reads the next batch into buf. Called with d.mu held.
func (d *dir) next() error {
	if d.eof {
		d.done = true
		return nil
	}
	if d.listed {
		ok, err := d.list()
		if ok {
			return err
		}
		d.listed = false
	}
	if err := d.open(); err != nil {
		return err
	}
	ents, err := d.f.f.Readdir(d.off, dirBatch)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	d.buf, d.done, d.issued = ents, len(ents) == 0, 0
	return nil
}

// walkAhead starts walks for the entries the kernel will ask about next
// (a listed batch has them already). Called with d.mu held.
func (d *dir) walkAhead() {
	if !d.plus || d.listed {
		return
	}
	if d.ahead == nil {
		d.ahead = map[string]*walked{}
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
		if w.ready == closed {
			continue // a listing's: no walk, nothing to close
		}
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
	d.off, d.buf, d.done, d.eof = off, nil, false, false
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
	defer d.mu.Unlock()
	d.discardAhead()
	d.f.close()
}

// Fsyncdir implements fs.FileFsyncdirer.
func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.open(); err != nil {
		return errno(err)
	}
	return errno(d.f.f.FSync())
}
