//go:build linux

package export

import (
	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"golang.org/x/sys/unix"
)

// statDir answers the extension's Tstatdir: the directory is walked from
// a fresh root as Twalk walks it (one component at a time, confined), and
// each name is stat'ed in it as a walk to it would be, without opening it.
func (t *tree) statDir(dir string, names []string) (uint64, []p9x.Entry, error) {
	root, err := t.Attach()
	if err != nil {
		return 0, nil, err
	}
	defer root.Close()
	d := root.(*node)
	if comps := splitDir(dir); len(comps) > 0 {
		_, f, err := d.Walk(comps)
		if err != nil {
			return 0, nil, err
		}
		defer f.Close()
		d = f.(*node)
	}
	if d.typ != unix.S_IFDIR {
		return 0, nil, unix.ENOTDIR
	}
	st, err := statFD(d.fd)
	if err != nil {
		return 0, nil, err
	}
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
	return t.qid(&st).Path, ents, nil
}
