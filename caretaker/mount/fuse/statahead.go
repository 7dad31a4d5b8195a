package fuse

import (
	"errors"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/p9"
)

// errWalk marks an entry whose attributes a Tstatdir did not bring (the
// export does not speak it, or the directory moved meanwhile): Lookup
// walks to it instead.
var errWalk = errors.New("walk to the entry")

// statAhead asks for the attributes of the batch's entries not yet asked
// for, MaxNames to a Tstatdir. Called with d.mu held.
func (d *dir) statAhead() {
	for d.issued < len(d.buf) {
		end := min(d.issued+p9x.MaxNames, len(d.buf))
		ready := make(chan struct{})
		var names []string
		var ws []*walked
		for _, e := range d.buf[d.issued:end] {
			if _, ok := d.ahead[e.Name]; ok {
				continue
			}
			w := &walked{ready: ready}
			d.ahead[e.Name] = w
			names, ws = append(names, e.Name), append(ws, w)
		}
		d.issued = end
		go d.statNames(names, ws, ready)
	}
}

// statNames fills ws, the entries for names, from one Tstatdir, and then
// closes ready. The directory is named by its path from the root, which a
// rename can change meanwhile: an answer for another directory (its QID
// not this one's inode) is not used.
func (d *dir) statNames(names []string, ws []*walked, ready chan struct{}) {
	defer close(ready)
	if len(names) == 0 {
		return
	}
	dirPath, ents, err := d.n.m.conn.StatDir(d.n.Path(nil), names)
	if err == nil && ino(dirPath) != d.n.StableAttr().Ino {
		err = errWalk
	}
	for i, w := range ws {
		switch {
		case err != nil:
			w.err = errWalk
		case ents[i].Err != 0:
			w.err = ents[i].Err
		default:
			w.qids, w.mask, w.attr = []p9.QID{ents[i].QID}, ents[i].Mask, ents[i].Attr
		}
	}
}
