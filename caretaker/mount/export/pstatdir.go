package export

import (
	"path"
	"strings"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/linux"
)

// statDir answers the extension's Tstatdir, as tree.statDir does: the
// directory walked from a fresh root, each name Lstat'ed in it.
func (t *ptree) statDir(dir string, names []string) (uint64, []p9x.Entry, error) {
	root, err := t.Attach()
	if err != nil {
		return 0, nil, err
	}
	defer root.Close()
	d := root.(*pnode)
	if comps := splitDir(dir); len(comps) > 0 {
		_, f, err := d.Walk(comps)
		if err != nil {
			return 0, nil, err
		}
		defer f.Close()
		d = f.(*pnode)
	}
	r, err := d.dirRoot()
	if err != nil {
		return 0, nil, err
	}
	fi, err := r.Lstat(".")
	if err != nil {
		return 0, nil, err
	}
	rel := d.relPath()
	ents := make([]p9x.Entry, len(names))
	for i, name := range names {
		e := &ents[i]
		if err := checkName(name); err != nil || !d.visible(name) {
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
	return t.qid(fi, rel).Path, ents, nil
}

// portableErr is err as the portable nodes report it.
func portableErr(err error) error {
	wirePortable(&err)
	return err
}

// splitDir splits a Tstatdir's directory into the names Walk takes; each
// is checked there.
func splitDir(dir string) []string {
	if dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}
