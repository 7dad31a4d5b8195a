package builder

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/tonistiigi/fsutil"
)

func walkPaths(t *testing.T, f fsutil.FS, target string) []string {
	t.Helper()
	var out []string
	err := f.Walk(context.Background(), target, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStageFS: the stages' directories join the context under
// .cornus-stages in the lexical order BuildKit's file sync checks, a walk
// of a target stays in it, files open through it, and the context's own
// .cornus-stages is hidden.
func TestStageFS(t *testing.T) {
	ctxDir := t.TempDir()
	write(t, ctxDir, map[string]string{".a": "", ".dockerignore": "", "Dockerfile": "", "z/f": "", ".cornus-stages/planted": "x"})
	ctxFS, root, err := rootFS(ctxDir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	dirs := map[string]fsutil.FS{}
	for _, i := range []int{0, 1, 2, 10} {
		d := t.TempDir()
		write(t, d, map[string]string{"install.sh": "stage " + strconv.Itoa(i), "lib/x": ""})
		f, r, err := rootFS(d)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		dirs[strconv.Itoa(i)] = f
	}
	s := &stageFS{ctx: ctxFS, dirs: dirs}
	all := walkPaths(t, s, "/")
	if !slices.IsSorted(all) {
		t.Fatalf("walk out of lexical order: %q", all)
	}
	if slices.Contains(all, ".cornus-stages/planted") {
		t.Fatal("the context's own .cornus-stages shows through")
	}
	for _, want := range []string{".a", ".cornus-stages", ".cornus-stages/0/install.sh", ".cornus-stages/10/lib/x", ".dockerignore", "z/f"} {
		if !slices.Contains(all, want) {
			t.Errorf("walk lacks %s: %q", want, all)
		}
	}
	if got := walkPaths(t, s, ".cornus-stages/10"); !slices.Equal(got, []string{".cornus-stages/10", ".cornus-stages/10/install.sh", ".cornus-stages/10/lib", ".cornus-stages/10/lib/x"}) {
		t.Errorf("walk of one stage: %q", got)
	}
	if got := walkPaths(t, s, ".dockerignore"); !slices.Equal(got, []string{".dockerignore"}) {
		t.Errorf("walk of a context file: %q", got)
	}
	rc, err := s.Open(".cornus-stages/2/install.sh")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "stage 2" {
		t.Errorf("open: %q", data)
	}
	if _, err := s.Open(".cornus-stages/7/install.sh"); !os.IsNotExist(err) {
		t.Errorf("a stage that is not there: %v", err)
	}
}
