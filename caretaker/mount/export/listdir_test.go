package export

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/linux"
)

// openExport opens src as an export (only: its single visible name).
func openExport(t *testing.T, src, only string, o Options) exportTree {
	t.Helper()
	if o.Portable {
		tr, err := openPTree(src, only, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.close)
		return tr
	}
	tr, err := openTree(src, only, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.close)
	return tr
}

// names lists a Tlistdir's answer's names.
func names(ents []p9x.Dirent) map[string]p9x.Dirent {
	m := map[string]p9x.Dirent{}
	for _, e := range ents {
		m[e.Name] = e
	}
	return m
}

// Locks down Tlistdir as a way in from the mounting side: whatever
// directory path it sends, it lists directories below the export's root
// and nothing else, and describes links, never following them.
func TestListDirConfined(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		tr := openExport(t, src, "", o)
		for _, dir := range []string{"..", "../outside", "/", "/etc", "etc", "up", "out", "dotdot", "dir/..", "dir//", "./dir", "file", "secretlink"} {
			if _, ents, _, err := listDir(tr, dir, 0, p9x.MaxEntries); err == nil {
				t.Errorf("Tlistdir of %q answered: %+v", dir, ents)
			}
		}
		_, ents, eof, err := listDir(tr, "", 0, p9x.MaxEntries)
		if err != nil || !eof {
			t.Fatalf("the root: %v (eof %v)", err, eof)
		}
		got := names(ents)
		if up := got["up"]; up.Err != 0 || !up.Attr.Mode.IsSymlink() {
			t.Errorf("the link up: %+v, want the link itself", up)
		}
		if f := got["file"]; f.Err != 0 || !f.Attr.Mode.IsRegular() || f.Attr.Size != uint64(len("inside")) {
			t.Errorf("file: %+v", f)
		}
		// Names that never come from a listing are refused all the same.
		root, err := tr.Attach()
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		for i, e := range tr.statNames(root, []string{"..", ".", "", "a/b", "../outside", "secret", "absent"}) {
			if e.Err != linux.ENOENT {
				t.Errorf("statNames of name %d: %+v, want ENOENT", i, e)
			}
		}
	})
}

// Locks down Tlistdir on a single-file export: only the exported name
// exists, in the root only.
func TestListDirSingleFile(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		tr := openExport(t, src, "file", o)
		_, ents, _, err := listDir(tr, "", 0, p9x.MaxEntries)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 || ents[0].Name != "file" || ents[0].Err != 0 {
			t.Fatalf("single-file export's root lists %+v", ents)
		}
		if _, _, _, err := listDir(tr, "dir", 0, p9x.MaxEntries); err == nil {
			t.Fatal("a directory other than the root listed in a single-file export")
		}
	})
}

// Locks down Tlistdir's answers: the same QID paths and attributes as a
// walk gives (so the mounting side's inodes match whichever way it learnt
// of a file), batches resuming at an entry's offset, the end flagged.
func TestListDirMatchesWalk(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		const n = 5
		for i := range n {
			if err := os.WriteFile(filepath.Join(src, "dir", fmt.Sprint("f", i)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tr := openExport(t, src, "", o)
		var all []p9x.Dirent
		var dirPath uint64
		for off, calls := uint64(0), 0; ; calls++ {
			if calls > n {
				t.Fatal("the listing never ended")
			}
			p, ents, eof, err := listDir(tr, "dir", off, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) > 2 {
				t.Fatalf("%d entries for 2 asked", len(ents))
			}
			dirPath, all = p, append(all, ents...)
			if eof {
				break
			}
			off = ents[len(ents)-1].Offset
		}
		if len(all) != n {
			t.Fatalf("listed %d entries in batches of 2, want %d", len(all), n)
		}
		root := rootNode(t, src, o)
		qids, f, _, _, err := root.WalkGetAttr([]string{"dir"})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if dirPath != qids[0].Path {
			t.Errorf("the directory's QID path %d, a walk's %d", dirPath, qids[0].Path)
		}
		for _, e := range all {
			iq, c, _, ia, err := f.WalkGetAttr([]string{e.Name})
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			if e.QID != iq[0] || e.Attr != ia {
				t.Errorf("%s: Tlistdir %+v %+v, walk %+v %+v", e.Name, e.QID, e.Attr, iq[0], ia)
			}
		}
		if _, _, _, err := listDir(tr, "dir/f0", 0, 1); err != linux.ENOTDIR {
			t.Errorf("listing a file: %v, want ENOTDIR", err)
		}
	})
}
