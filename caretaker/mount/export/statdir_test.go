package export

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cornus-dev/cornus/caretaker/mount/p9x"
	"github.com/hugelgupf/p9/linux"
)

// statDirOf opens src as an export (only: its single visible name) and
// returns its Tstatdir answer.
func statDirOf(t *testing.T, src, only string, o Options) func(dir string, names []string) (uint64, []p9x.Entry, error) {
	t.Helper()
	if o.Portable {
		tr, err := openPTree(src, only, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.close)
		return tr.statDir
	}
	tr, err := openTree(src, only, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.close)
	return tr.statDir
}

// Locks down Tstatdir as a way in from the mounting side: whatever
// directory path and names it sends, it learns the attributes of files
// below the export's root and nothing else; links are described, never
// followed.
func TestStatDirConfined(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		stat := statDirOf(t, src, "", o)
		for _, dir := range []string{"..", "../outside", "/", "/etc", "etc", "up", "out", "dotdot", "dir/..", "dir//", "./dir", "file", "secretlink"} {
			if _, ents, err := stat(dir, []string{"secret", "passwd", "file"}); err == nil {
				t.Errorf("Tstatdir of %q answered: %+v", dir, ents)
			}
		}
		_, ents, err := stat("", []string{"..", ".", "", "a/b", "../outside", "secret", "up", "file", "dir"})
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range []string{"..", ".", "", "a/b", "../outside", "secret"} {
			if ents[i].Err == 0 {
				t.Errorf("Tstatdir of the root's %q answered %+v", name, ents[i])
			}
		}
		up, file, dir := ents[6], ents[7], ents[8]
		if up.Err != 0 || !up.Attr.Mode.IsSymlink() {
			t.Errorf("the link up: %+v, want the link itself", up)
		}
		if file.Err != 0 || !file.Attr.Mode.IsRegular() || file.Attr.Size != uint64(len("inside")) {
			t.Errorf("file: %+v", file)
		}
		if dir.Err != 0 || !dir.Attr.Mode.IsDir() {
			t.Errorf("dir: %+v", dir)
		}
	})
}

// Locks down Tstatdir on a single-file export: only the exported name
// exists, in the root only.
func TestStatDirSingleFile(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		stat := statDirOf(t, src, "file", o)
		_, ents, err := stat("", []string{"file", "dir", "up"})
		if err != nil {
			t.Fatal(err)
		}
		if ents[0].Err != 0 || ents[1].Err != linux.ENOENT || ents[2].Err != linux.ENOENT {
			t.Fatalf("single-file export's root: %+v", ents)
		}
		if _, _, err := stat("dir", []string{"x"}); err == nil {
			t.Fatal("a directory other than the root answered in a single-file export")
		}
	})
}

// Locks down Tstatdir's QID paths: the same as a walk gives, so the
// mounting side's inodes match whichever way it learnt of a file.
func TestStatDirMatchesWalk(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		if err := os.WriteFile(filepath.Join(src, "dir", "inner"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		dirPath, ents, err := statDirOf(t, src, "", o)("dir", []string{"inner", "missing"})
		if err != nil {
			t.Fatal(err)
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
		iq, inner, _, ia, err := f.WalkGetAttr([]string{"inner"})
		if err != nil {
			t.Fatal(err)
		}
		inner.Close()
		if ents[0].QID != iq[0] || ents[0].Attr != ia {
			t.Errorf("inner: Tstatdir %+v %+v, walk %+v %+v", ents[0].QID, ents[0].Attr, iq[0], ia)
		}
		if !errors.Is(ents[1].Err, linux.ENOENT) {
			t.Errorf("missing: %v", ents[1].Err)
		}
	})
}
