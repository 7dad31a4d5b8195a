package clientdeploy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/patternmatcher"

	"github.com/cornus-dev/cornus/spec"
)

// fileState is what a poll compares of a file.
type fileState struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

// ruleFiles is one watch rule's view of its path: the files it selects
// (ignore and include applied), by slash path relative to the rule's
// path ("." when the path is a file).
type ruleFiles struct {
	rule    spec.WatchRule
	ignore  *patternmatcher.PatternMatcher // nil: none
	include *patternmatcher.PatternMatcher // nil: everything
	files   map[string]fileState
}

// alwaysIgnored are never synced nor a reason to rebuild, as in docker
// compose: a VCS's own files and editors' swap files.
var alwaysIgnored = []string{".git", "**/*~", "**/.*.swp", "**/.*.swx", "**/4913"}

func newRuleFiles(r spec.WatchRule) (*ruleFiles, error) {
	rf := &ruleFiles{rule: r}
	var err error
	if rf.ignore, err = patternmatcher.New(append(append([]string{}, alwaysIgnored...), r.Ignore...)); err != nil {
		return nil, err
	}
	if len(r.Include) > 0 {
		if rf.include, err = patternmatcher.New(r.Include); err != nil {
			return nil, err
		}
	}
	rf.files, err = rf.scan()
	return rf, err
}

// ignored reports whether the rule's ignore patterns leave rel out.
func (rf *ruleFiles) ignored(rel string) bool {
	if rel == "." {
		return false
	}
	ok, _ := rf.ignore.MatchesOrParentMatches(rel)
	return ok
}

// selects reports whether the rule watches the file rel.
func (rf *ruleFiles) selects(rel string) bool {
	if rel == "." || rf.include == nil {
		return !rf.ignored(rel)
	}
	ok, _ := rf.include.MatchesOrParentMatches(rel)
	return ok && !rf.ignored(rel)
}

// scan lists the rule's files now; a missing path is an empty tree.
func (rf *ruleFiles) scan() (map[string]fileState, error) {
	out := map[string]fileState{}
	err := filepath.WalkDir(rf.rule.Path, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone meanwhile
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(rf.rule.Path, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// Included files may lie below a directory no include names.
			if rf.ignored(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !rf.selects(rel) {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		out[rel] = fileState{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	return out, err
}

// poll rescans and returns what changed (written or new) and what went.
func (rf *ruleFiles) poll() (changed, gone []string, err error) {
	now, err := rf.scan()
	if err != nil {
		return nil, nil, err
	}
	for rel, st := range now {
		if old, ok := rf.files[rel]; !ok || old != st {
			changed = append(changed, rel)
		}
	}
	for rel := range rf.files {
		if _, ok := now[rel]; !ok {
			gone = append(gone, rel)
		}
	}
	rf.files = now
	return changed, gone, nil
}

// all are every file the rule selects now (initial_sync).
func (rf *ruleFiles) all() []string {
	out := make([]string, 0, len(rf.files))
	for rel := range rf.files {
		out = append(out, rel)
	}
	return out
}

// exists reports whether a changed file is still there to copy.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
