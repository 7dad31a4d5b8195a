package fuse

import (
	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/p9"
)

// list reads the next batch of a listed directory (Tlistdir): entries and
// their attributes in one round trip, no fid. It reports false when the
// export does not speak it, or when the directory at the node's path is
// not the node's (renamed meanwhile): the caller lists through a fid.
// Called with d.mu held.
func (d *dir) list() (ok bool, err error) {
	dirPath, ents, eof, err := d.n.m.conn.ListDir(d.n.Path(nil), d.off, p9x.MaxEntries)
	if err == p9x.ErrUnsupported || err == nil && ino(dirPath) != d.n.StableAttr().Ino {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if d.ahead == nil {
		d.ahead = map[string]*walked{}
	}
	d.buf, d.eof = d.buf[:0], eof
	for _, e := range ents {
		d.buf = append(d.buf, p9.Dirent{QID: e.QID, Offset: e.Offset, Type: p9.QIDType(e.Type), Name: e.Name})
		w := &walked{ready: closed}
		if e.Err != 0 {
			w.err = e.Err
		} else {
			w.qids, w.mask, w.attr = []p9.QID{e.QID}, e.Mask, e.Attr
		}
		d.ahead[e.Name] = w
	}
	if len(ents) == 0 {
		d.done = true
	}
	return true, nil
}

// closed is the ready channel of what a listing brought: nothing to wait
// for.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
