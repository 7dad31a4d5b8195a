//go:build linux

package export

import (
	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/p9"
)

// statNames describes names in the directory dir (one of this tree's
// nodes), each as a walk to it would find it, without opening it.
func (t *tree) statNames(dir p9.File, names []string) []p9x.Entry {
	d := dir.(*node)
	return describe(names, d.visible, func(name string) (e p9x.Entry, err error) {
		defer wire(&err)
		st, err := statAt(d.fd, name)
		if err != nil {
			return e, err
		}
		e.QID = t.qid(&st)
		e.Mask, e.Attr = attrOf(&st)
		return e, nil
	})
}
