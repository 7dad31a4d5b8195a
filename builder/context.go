package builder

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/moby/patternmatcher/ignorefile"
	"github.com/tonistiigi/fsutil"

	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/spec"
)

// BuildKit's names for the two local sources the Dockerfile frontend reads.
const (
	localContext    = "context"
	localDockerfile = "dockerfile"
)

// source is what a build reads from the client's disk: the context and the
// Dockerfile's directory, each confined to its directory (an os.Root: no
// path, symlink or ".." reaches outside), the context filtered by its
// ignore file here, before anything is sent.
type source struct {
	context    fsutil.FS
	dockerfile fsutil.FS
	filename   string   // the Dockerfile's name in dockerfile
	excludes   []string // the ignore file's patterns
	// named are additional contexts that are directories; refs the
	// others (docker-image://REF, oci-layout://, a URL), as the
	// frontend's context:NAME attribute takes them.
	named map[string]fsutil.FS
	refs  map[string]string
	// stores are content stores the refs name (oci-layout://ID@DIGEST),
	// served from the client's side of the session.
	stores  map[string]content.Store
	cleanup func()
}

// onCleanup adds f to what cleanup does.
func (s *source) onCleanup(f func()) {
	prev := s.cleanup
	s.cleanup = func() { f(); prev() }
}

// openSource opens b's context and Dockerfile. An inline Dockerfile is
// written to a private temporary directory.
func openSource(b spec.Build) (*source, error) {
	ctxFS, ctxRoot, err := rootFS(b.Context)
	if err != nil {
		return nil, fmt.Errorf("build context %s: %w", b.Context, err)
	}
	s := &source{cleanup: func() { _ = ctxRoot.Close() }}
	ok := false
	defer func() {
		if !ok {
			s.cleanup()
		}
	}()
	dfDir, dfName := filepath.Split(b.DockerfilePath())
	if b.DockerfileInline != "" {
		tmp, err := os.MkdirTemp("", "cornus-dockerfile-")
		if err != nil {
			return nil, err
		}
		prev := s.cleanup
		s.cleanup = func() { prev(); _ = os.RemoveAll(tmp) }
		if err := os.WriteFile(filepath.Join(tmp, "Dockerfile"), []byte(b.DockerfileInline), 0o600); err != nil {
			return nil, err
		}
		dfDir, dfName = tmp, "Dockerfile"
	} else if err := boundedfile.Check(b.DockerfilePath(), boundedfile.Dockerfile); err != nil {
		return nil, err
	}
	dfFS, dfRoot, err := rootFS(dfDir)
	if err != nil {
		return nil, fmt.Errorf("dockerfile %s: %w", b.DockerfilePath(), err)
	}
	prev := s.cleanup
	s.cleanup = func() { prev(); _ = dfRoot.Close() }
	s.dockerfile, s.filename = dfFS, dfName

	ignore, excludes, err := ignorePatterns(ctxRoot, dfRoot, dfName)
	if err != nil {
		return nil, err
	}
	s.excludes = excludes
	if ignore != ".dockerignore" {
		// The Dockerfile's own ignore file replaces .dockerignore; hide
		// that one from a frontend too old to know the difference.
		excludes = append(excludes, ".dockerignore")
	}
	if s.context, err = fsutil.NewFilterFS(ctxFS, &fsutil.FilterOpt{ExcludePatterns: excludes}); err != nil {
		return nil, fmt.Errorf("build context %s: %s: %w", b.Context, ignore, err)
	}
	if err := s.openNamed(b.AdditionalContexts); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// openNamed opens the additional contexts that are directories; the
// caller has resolved service:NAME into an image reference.
func (s *source) openNamed(contexts map[string]string) error {
	s.named, s.refs = map[string]fsutil.FS{}, map[string]string{}
	for name, v := range contexts {
		if !filepath.IsAbs(v) {
			s.refs[name] = v
			continue
		}
		fs, r, err := rootFS(v)
		if err != nil {
			return fmt.Errorf("additional context %s: %w", name, err)
		}
		prev := s.cleanup
		s.cleanup = func() { prev(); _ = r.Close() }
		s.named[name] = fs
	}
	return nil
}

// rootFS is dir as an fsutil.FS confined to it.
func rootFS(dir string) (fsutil.FS, *os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return fsutil.NewRootFS(fsutil.NewRoot(r)), r, nil
}

// ignorePatterns reads the ignore file docker build uses: NAME.dockerignore
// beside the Dockerfile, else .dockerignore in the context. It returns the
// file's name and its patterns.
func ignorePatterns(ctx, df *os.Root, dockerfile string) (string, []string, error) {
	for _, c := range []struct {
		root *os.Root
		name string
	}{{df, dockerfile + ".dockerignore"}, {ctx, ".dockerignore"}} {
		data, err := readRoot(c.root, c.name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		pats, err := ignorefile.ReadAll(bytes.NewReader(data))
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", c.name, err)
		}
		return c.name, pats, nil
	}
	return ".dockerignore", nil, nil
}

func readRoot(r *os.Root, name string) ([]byte, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return boundedfile.ReadFrom(f, filepath.Join(r.Name(), name), boundedfile.Dockerfile)
}
