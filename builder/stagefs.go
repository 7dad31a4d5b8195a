package builder

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tonistiigi/fsutil"
	"github.com/tonistiigi/fsutil/types"

	"github.com/cornus-dev/cornus/spec"
)

// stagesRoot is the context directory that holds the stages' directories.
const stagesRoot = spec.StagesRoot

// stageFS is a build context with the added stages' directories under
// stagesRoot. BuildKit's file sync wants a walk in lexical order, so the
// stages' subtree is walked where stagesRoot falls among the context's
// top-level entries. The context's own stagesRoot, if any, is hidden.
type stageFS struct {
	ctx  fsutil.FS
	dirs map[string]fsutil.FS // by stage index, as a string
}

// Walk walks target (the whole tree for "", "." or "/"): within
// stagesRoot the stages' part alone, elsewhere the context's alone.
func (s *stageFS) Walk(ctx context.Context, target string, fn fs.WalkDirFunc) error {
	t := strings.Trim(filepath.ToSlash(filepath.Clean(target)), "/")
	switch {
	case t == "" || t == ".":
		return s.walkAll(ctx, target, fn)
	case t == stagesRoot:
		return s.walkStages(ctx, fn)
	case strings.HasPrefix(t, stagesRoot+"/"):
		i, sub, _ := strings.Cut(strings.TrimPrefix(t, stagesRoot+"/"), "/")
		if _, ok := s.dirs[i]; !ok {
			return nil
		}
		if sub == "" { // the stage's directory itself first, as a walk of it has
			if err := fn(t, dirEntry(t), nil); err != nil {
				return skipped(err)
			}
		}
		return skipped(s.walkStage(ctx, i, sub, fn))
	}
	return s.ctx.Walk(ctx, target, fn)
}

// walkAll walks the context with the stages' subtree where stagesRoot
// falls among its top-level entries.
func (s *stageFS) walkAll(ctx context.Context, target string, fn fs.WalkDirFunc) error {
	done := false
	err := s.ctx.Walk(ctx, target, func(path string, entry fs.DirEntry, err error) error {
		p := strings.TrimPrefix(filepath.ToSlash(path), "/")
		if p == stagesRoot || strings.HasPrefix(p, stagesRoot+"/") {
			if entry != nil && entry.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !done && !strings.Contains(p, "/") && p > stagesRoot {
			done = true
			if err := s.walkStages(ctx, fn); err != nil {
				return err
			}
		}
		return fn(path, entry, err)
	})
	if err != nil || done {
		return err
	}
	return s.walkStages(ctx, fn)
}

// walkStages walks stagesRoot: itself, then each stage's directory. A
// filter's SkipDir (the walker's caller excluding a directory) is honored
// here: it must never reach the context's walk, which would skip
// something else.
func (s *stageFS) walkStages(ctx context.Context, fn fs.WalkDirFunc) error {
	if err := fn(stagesRoot, dirEntry(stagesRoot), nil); err != nil {
		return skipped(err)
	}
	for _, i := range slices.Sorted(maps.Keys(s.dirs)) { // "10" before "2": lexical, as the walk's
		prefix := stagesRoot + "/" + i // spec.StageDir
		if err := fn(prefix, dirEntry(prefix), nil); err != nil {
			if serr := skipped(err); serr != nil {
				return serr
			}
			continue
		}
		if err := skipped(s.walkStage(ctx, i, "", fn)); err != nil {
			return err
		}
	}
	return nil
}

// walkStage walks stage i's directory from sub ("": all of it), its
// paths under the stage's place in the context.
func (s *stageFS) walkStage(ctx context.Context, i, sub string, fn fs.WalkDirFunc) error {
	prefix := stagesRoot + "/" + i
	return s.dirs[i].Walk(ctx, sub, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := entry.Info()
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*types.Stat)
		if !ok {
			return fs.ErrInvalid
		}
		st = st.Clone()
		st.Path = prefix + "/" + filepath.ToSlash(st.Path)
		if st.Linkname != "" && os.FileMode(st.Mode)&os.ModeSymlink == 0 {
			st.Linkname = prefix + "/" + st.Linkname // a hard link names a path of the tree
		}
		return fn(st.Path, &fsutil.DirEntryInfo{Stat: st}, nil)
	})
}

// skipped is err, less a SkipDir that the caller's walk has already
// acted on.
func skipped(err error) error {
	if errors.Is(err, filepath.SkipDir) {
		return nil
	}
	return err
}

func (s *stageFS) Open(p string) (io.ReadCloser, error) {
	p = filepath.ToSlash(p)
	if rest, ok := strings.CutPrefix(p, stagesRoot+"/"); ok {
		i, sub, _ := strings.Cut(rest, "/")
		if d, ok := s.dirs[i]; ok {
			return d.Open(sub)
		}
		return nil, fs.ErrNotExist
	}
	return s.ctx.Open(p)
}

func dirEntry(path string) fs.DirEntry {
	return &fsutil.DirEntryInfo{Stat: &types.Stat{Path: path, Mode: uint32(os.ModeDir | 0o755)}}
}
