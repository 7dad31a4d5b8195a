package builder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// source is what a build reads from the client's files (Files): the
// context and the Dockerfile's directory, each confined to its directory,
// the context filtered by its ignore file where the files are, before
// anything is sent.
type source struct {
	files      Files
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
	// served from this side of the session.
	stores  map[string]content.Store
	cleanup func()
}

// onCleanup adds f to what close does.
func (s *source) onCleanup(f func()) {
	prev := s.cleanup
	s.cleanup = func() { f(); prev() }
}

// close runs every cleanup added so far. A method, so that a deferred
// close runs what is added after the defer (`defer s.cleanup()` would
// bind the func as it was: a base image handed over later stayed locked).
func (s *source) close() { s.cleanup() }

// openSource opens b's context and Dockerfile from files. An inline
// Dockerfile is written to a private temporary directory here.
func openSource(ctx context.Context, files Files, b spec.Build) (_ *source, err error) {
	s := &source{files: files, cleanup: func() {}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if b.DockerfileInline != "" {
		if err := s.replaceDockerfile(b.DockerfileInline); err != nil {
			return nil, err
		}
	} else {
		dir, name := filepath.Split(b.DockerfilePath())
		if s.dockerfile, err = s.dir(ctx, dir, nil); err != nil {
			return nil, fmt.Errorf("dockerfile %s: %w", b.DockerfilePath(), err)
		}
		s.filename = name
	}
	raw, err := s.dir(ctx, b.Context, nil)
	if err != nil {
		return nil, fmt.Errorf("build context %s: %w", b.Context, err)
	}
	ignore, excludes, err := ignorePatterns(raw, s.dockerfile, s.filename)
	if err != nil {
		return nil, err
	}
	s.excludes = excludes
	if b.DockerfileInline == "" {
		if err := s.pinDockerfile(); err != nil {
			return nil, err
		}
	}
	if ignore != ".dockerignore" {
		// The Dockerfile's own ignore file replaces .dockerignore; hide
		// that one from a frontend too old to know the difference.
		excludes = append(excludes, ".dockerignore")
	}
	if s.context, err = s.dir(ctx, b.Context, excludes); err != nil {
		return nil, fmt.Errorf("build context %s: %s: %w", b.Context, ignore, err)
	}
	if err := s.openNamed(ctx, b.AdditionalContexts); err != nil {
		return nil, err
	}
	return s, nil
}

// pinDockerfile reads the Dockerfile once and makes that copy the one
// every later reader sees (the checks, the builder): a client serving
// its files cannot show a check one Dockerfile and the builder another.
func (s *source) pinDockerfile() error {
	data, err := readDockerfile(s)
	if err != nil {
		return err
	}
	return s.replaceDockerfile(string(data))
}

// dir opens a directory of the client's, released with the source.
func (s *source) dir(ctx context.Context, path string, excludes []string) (fsutil.FS, error) {
	fs, done, err := s.files.Dir(ctx, path, excludes)
	if err != nil {
		return nil, err
	}
	s.onCleanup(done)
	return fs, nil
}

// openNamed opens the additional contexts that are directories; the
// caller has resolved service:NAME into an image reference.
func (s *source) openNamed(ctx context.Context, contexts map[string]string) error {
	s.named, s.refs = map[string]fsutil.FS{}, map[string]string{}
	for name, v := range contexts {
		if !filepath.IsAbs(v) {
			s.refs[name] = v
			continue
		}
		fs, err := s.dir(ctx, v, nil)
		if err != nil {
			return fmt.Errorf("additional context %s: %w", name, err)
		}
		s.named[name] = fs
	}
	return nil
}

// rootFS is dir as an fsutil.FS confined to it, opening regular files
// only (a FIFO or device would block or read the host's).
func rootFS(dir string) (fsutil.FS, *os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return regularOnly{fsutil.NewRootFS(fsutil.NewRoot(r)), r}, r, nil
}

type regularOnly struct {
	fsutil.FS
	root *os.Root
}

func (f regularOnly) Open(p string) (io.ReadCloser, error) {
	fi, err := f.root.Lstat(filepath.FromSlash(p))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open %s: %w", p, boundedfile.ErrNotRegular)
	}
	return f.FS.Open(p)
}

// ignorePatterns reads the ignore file docker build uses: NAME.dockerignore
// beside the Dockerfile, else .dockerignore in the context. It returns the
// file's name and its patterns.
func ignorePatterns(ctxFS, dfFS fsutil.FS, dockerfile string) (string, []string, error) {
	for _, c := range []struct {
		fs   fsutil.FS
		name string
	}{{dfFS, dockerfile + ".dockerignore"}, {ctxFS, ".dockerignore"}} {
		data, err := readFS(c.fs, c.name)
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

// readFS reads a file of a build's directory, bounded as Dockerfiles are.
func readFS(f fsutil.FS, name string) ([]byte, error) {
	if f == nil {
		return nil, fs.ErrNotExist
	}
	rc, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return boundedfile.ReadFrom(rc, name, boundedfile.Dockerfile)
}
