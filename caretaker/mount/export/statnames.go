//go:build linux

package export

import (
	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// statNames describes names in the directory dir (one of this tree's
// nodes), each as a walk to it would find it, without opening it.
func (t *tree) statNames(dir p9.File, names []string) []p9x.Entry {
	d := dir.(*node)
	ents := make([]p9x.Entry, len(names))
	for i, name := range names {
		e := &ents[i]
		if err := checkName(name); err != nil || !d.visible(name) {
			e.Err = p9x.Errno(unix.ENOENT)
			continue
		}
		st, err := statAt(d.fd, name)
		if err != nil {
			e.Err = p9x.Errno(err)
			continue
		}
		e.QID = t.qid(&st)
		e.Mask, e.Attr = attrOf(&st)
	}
	return ents
}
