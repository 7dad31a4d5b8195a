package export

import (
	"path"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// statNames describes names in the directory dir (one of this tree's
// nodes), as tree.statNames does: each Lstat'ed in the directory's root.
func (t *ptree) statNames(dir p9.File, names []string) []p9x.Entry {
	d := dir.(*pnode)
	ents := make([]p9x.Entry, len(names))
	r, err := d.dirRoot()
	rel := d.relPath()
	for i, name := range names {
		e := &ents[i]
		if err != nil {
			e.Err = p9x.Errno(portableErr(err))
			continue
		}
		if checkName(name) != nil || !d.visible(name) {
			e.Err = linux.ENOENT
			continue
		}
		fi, err := r.Lstat(name)
		if err != nil {
			e.Err = p9x.Errno(portableErr(err))
			continue
		}
		e.QID = t.qid(fi, path.Join(rel, name))
		e.Mask, e.Attr = attrOfInfo(fi)
	}
	return ents
}

// portableErr is err as the portable nodes report it.
func portableErr(err error) error {
	wirePortable(&err)
	return err
}
