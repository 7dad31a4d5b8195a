package clientdeploy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// A rule's poll reports written, new and gone files, never an ignored
// one, only included ones when include is set, and nothing under .git.
func TestRuleFilesPoll(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("keep.txt", "1")
	write("sub/a.go", "1")
	rf, err := newRuleFiles(spec.WatchRule{Path: dir, Action: spec.WatchSync, Target: "/app", Ignore: []string{"*.log", "build/"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(rf.all())); !slices.Equal(got, []string{"keep.txt", "sub/a.go"}) {
		t.Fatalf("first scan: %v", got)
	}
	write("keep.txt", "22") // a new size: written
	write("sub/new.txt", "n")
	write("debug.log", "ignored")
	write("build/out", "ignored")
	write(".git/HEAD", "ignored")
	if err := os.Remove(filepath.Join(dir, "sub", "a.go")); err != nil {
		t.Fatal(err)
	}
	changed, gone, err := rf.poll()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(changed)
	if !slices.Equal(changed, []string{"keep.txt", "sub/new.txt"}) || !slices.Equal(gone, []string{"sub/a.go"}) {
		t.Fatalf("poll: changed %v, gone %v", changed, gone)
	}
	if changed, gone, _ := rf.poll(); len(changed)+len(gone) != 0 {
		t.Fatalf("a poll with nothing new: changed %v, gone %v", changed, gone)
	}
	// A touch with the same size still counts (its time changed).
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(dir, "keep.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	if changed, _, _ := rf.poll(); !slices.Equal(changed, []string{"keep.txt"}) {
		t.Fatalf("after a touch: %v", changed)
	}

	only, err := newRuleFiles(spec.WatchRule{Path: dir, Action: spec.WatchRebuild, Include: []string{"*.txt", "sub/**"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(only.all())); !slices.Equal(got, []string{"keep.txt", "sub/new.txt"}) {
		t.Fatalf("include *.txt and sub/**: %v", got)
	}
}
