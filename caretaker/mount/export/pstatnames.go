package export

import (
	"path"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/p9"
)

// statNames describes names in the directory dir (one of this tree's
// nodes), as tree.statNames does: each Lstat'ed in the directory's root.
func (t *ptree) statNames(dir p9.File, names []string) []p9x.Entry {
	d := dir.(*pnode)
	r, rerr := d.dirRoot()
	rel := d.relPath()
	return describe(names, d.visible, func(name string) (e p9x.Entry, err error) {
		defer wirePortable(&err)
		if rerr != nil {
			return e, rerr
		}
		fi, err := r.Lstat(name)
		if err != nil {
			return e, err
		}
		e.QID = t.qid(fi, path.Join(rel, name))
		e.Mask, e.Attr = attrOfInfo(fi)
		return e, nil
	})
}
