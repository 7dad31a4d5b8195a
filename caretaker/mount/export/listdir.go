package export

import (
	"errors"
	"io"
	"strings"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// listBatch is the byte count asked of each Readdir of a Tlistdir.
const listBatch = 64 << 10

// listDir answers the extension's Tlistdir for either confinement: the
// directory walked from a fresh root as Twalk walks it, opened as Tlopen
// opens it, its entries read as Treaddir reads them, each described as a
// walk to it would find it (statNames, nothing opened).
func listDir(t exportTree, dir string, offset uint64, max int) (uint64, []p9x.Dirent, bool, error) {
	root, err := t.Attach()
	if err != nil {
		return 0, nil, false, err
	}
	defer root.Close()
	_, d, err := root.Walk(splitDir(dir))
	if err != nil {
		return 0, nil, false, err
	}
	defer d.Close()
	qid, _, a, err := d.GetAttr(p9.AttrMask{Mode: true})
	if err != nil {
		return 0, nil, false, err
	}
	if !a.Mode.IsDir() {
		return 0, nil, false, linux.ENOTDIR
	}
	if _, _, err := d.Open(p9.ReadOnly); err != nil {
		return 0, nil, false, err
	}
	var ents []p9.Dirent
	eof := false
	for off := offset; len(ents) < max; {
		batch, err := d.Readdir(off, listBatch)
		if errors.Is(err, io.EOF) || err == nil && len(batch) == 0 {
			eof = true
			break
		}
		if err != nil {
			return 0, nil, false, err
		}
		ents = append(ents, batch...)
		off = batch[len(batch)-1].Offset
	}
	if len(ents) > max {
		ents, eof = ents[:max], false
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name
	}
	attrs := t.statNames(d, names)
	out := make([]p9x.Dirent, len(ents))
	for i, e := range ents {
		out[i] = p9x.Dirent{Name: e.Name, Offset: e.Offset, Type: uint8(e.Type), Entry: attrs[i]}
	}
	return qid.Path, out, eof, nil
}

// describe gives one entry per name: a name that is no single component,
// or not visible here, as not found; any other as stat finds it.
func describe(names []string, visible func(string) bool, stat func(string) (p9x.Entry, error)) []p9x.Entry {
	ents := make([]p9x.Entry, len(names))
	for i, name := range names {
		if checkName(name) != nil || !visible(name) {
			ents[i].Err = linux.ENOENT
			continue
		}
		e, err := stat(name)
		if err != nil {
			e = p9x.Entry{Err: p9x.Errno(err)}
		}
		ents[i] = e
	}
	return ents
}

// splitDir splits a Tlistdir's directory into the names Walk takes; each
// is checked there.
func splitDir(dir string) []string {
	if dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}
