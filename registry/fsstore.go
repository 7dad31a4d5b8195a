package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
)

// FSStore keeps a registry's content under a directory, for backends with
// no image store of their own to re-export (kubernetes: the nodes pull
// from it):
//
//	blobs/ALG/HEX                   content, shared by every repository
//	repos/REPO/_blobs/ALG/HEX       the blobs REPO may read (empty files)
//	repos/REPO/_manifests/ALG/HEX   REPO's manifests (their media type)
//	repos/REPO/_tags/TAG            the digest TAG names
//
// Every file appears by a rename, so a process killed mid-write leaves
// nothing half-visible; a blob is linked only once it is whole. Repository
// components cannot begin with "_" (the name grammar), so no repository
// reaches the store's own directories.
//
// GC (fsgc.go) frees what no repository holds; writes wait while it runs.
type FSStore struct {
	dir string
	mu  sync.RWMutex // writes share it; GC holds it alone
}

// NewFSStore returns a store under dir, created if missing.
func NewFSStore(dir string) (*FSStore, error) {
	for _, d := range []string{"blobs", "repos", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("registry store: %w", err)
		}
	}
	return &FSStore{dir: dir}, nil
}

func (s *FSStore) blobPath(d digest.Digest) string {
	return filepath.Join(s.dir, "blobs", string(d.Algorithm()), d.Encoded())
}

func (s *FSStore) repoPath(repo string, parts ...string) string {
	return filepath.Join(append([]string{s.dir, "repos", filepath.FromSlash(repo)}, parts...)...)
}

func (s *FSStore) linkPath(repo string, d digest.Digest) string {
	return s.repoPath(repo, "_blobs", string(d.Algorithm()), d.Encoded())
}

func (s *FSStore) manifestPath(repo string, d digest.Digest) string {
	return s.repoPath(repo, "_manifests", string(d.Algorithm()), d.Encoded())
}

// Blob implements Store. The link it answers for is refreshed: a push
// checks its manifest's blobs this way just before it puts the manifest,
// and GC leaves fresh links alone.
func (s *FSStore) Blob(_ context.Context, repo string, d digest.Digest) (int64, error) {
	size, err := s.linked(repo, d)
	if err == nil {
		now := time.Now()
		_ = os.Chtimes(s.linkPath(repo, d), now, now) // best effort: a read must not fail on it
	}
	return size, err
}

// linked is the size of blob d when repo links it.
func (s *FSStore) linked(repo string, d digest.Digest) (int64, error) {
	if _, err := os.Stat(s.linkPath(repo, d)); err != nil {
		return 0, notFound(err)
	}
	st, err := os.Stat(s.blobPath(d))
	if err != nil {
		return 0, notFound(err)
	}
	return st.Size(), nil
}

// OpenBlob implements Store. A pull's read leaves the link as it is.
func (s *FSStore) OpenBlob(_ context.Context, repo string, d digest.Digest) (io.ReadSeekCloser, error) {
	if _, err := s.linked(repo, d); err != nil {
		return nil, err
	}
	f, err := os.Open(s.blobPath(d))
	if err != nil {
		return nil, notFound(err)
	}
	return f, nil
}

// PutBlob implements Store.
func (s *FSStore) PutBlob(ctx context.Context, repo string, d digest.Digest, size int64, r io.Reader) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, err := os.Stat(s.blobPath(d)); err != nil {
		if err := s.write(s.blobPath(d), func(w io.Writer) error {
			n, err := io.Copy(w, r)
			if err == nil && n != size {
				err = fmt.Errorf("blob %s: %d bytes, want %d", d, n, size)
			}
			return err
		}); err != nil {
			return err
		}
	}
	return s.link(repo, d)
}

// LinkBlob implements Store.
func (s *FSStore) LinkBlob(_ context.Context, repo string, d digest.Digest) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.link(repo, d)
}

func (s *FSStore) link(repo string, d digest.Digest) error {
	if _, err := os.Stat(s.blobPath(d)); err != nil {
		return notFound(err)
	}
	return s.writeBytes(s.linkPath(repo, d), nil)
}

// DeleteBlob implements Store.
func (s *FSStore) DeleteBlob(_ context.Context, repo string, d digest.Digest) error {
	return notFound(os.Remove(s.linkPath(repo, d)))
}

// Manifest implements Store.
func (s *FSStore) Manifest(_ context.Context, repo, ref string) (Manifest, error) {
	d, err := digest.Parse(ref)
	if err != nil {
		data, err := os.ReadFile(s.repoPath(repo, "_tags", ref))
		if err != nil {
			return Manifest{}, notFound(err)
		}
		if d, err = digest.Parse(string(data)); err != nil {
			return Manifest{}, fmt.Errorf("tag %s: %w", ref, err)
		}
	}
	mt, err := os.ReadFile(s.manifestPath(repo, d))
	if err != nil {
		return Manifest{}, notFound(err)
	}
	data, err := os.ReadFile(s.blobPath(d))
	if err != nil {
		return Manifest{}, notFound(err)
	}
	return Manifest{MediaType: string(mt), Digest: d, Data: data}, nil
}

// PutManifest implements Store.
func (s *FSStore) PutManifest(_ context.Context, repo string, m Manifest, tags ...string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.writeBytes(s.blobPath(m.Digest), m.Data); err != nil {
		return err
	}
	if err := s.writeBytes(s.manifestPath(repo, m.Digest), []byte(m.MediaType)); err != nil {
		return err
	}
	for _, tag := range tags {
		if err := s.writeBytes(s.repoPath(repo, "_tags", tag), []byte(m.Digest)); err != nil {
			return err
		}
	}
	return nil
}

// DeleteManifest implements Store.
func (s *FSStore) DeleteManifest(ctx context.Context, repo string, d digest.Digest) error {
	if err := os.Remove(s.manifestPath(repo, d)); err != nil {
		return notFound(err)
	}
	tags, err := s.tagDigests(repo)
	if err != nil {
		return err
	}
	for tag, td := range tags {
		if td == d {
			if err := s.DeleteTag(ctx, repo, tag); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// DeleteTag implements Store.
func (s *FSStore) DeleteTag(_ context.Context, repo, tag string) error {
	return notFound(os.Remove(s.repoPath(repo, "_tags", tag)))
}

// Manifests implements Store.
func (s *FSStore) Manifests(_ context.Context, repo string) ([]digest.Digest, error) {
	var out []digest.Digest
	err := s.eachFile(s.repoPath(repo, "_manifests"), func(d digest.Digest, _ string, _ fs.DirEntry) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

func (s *FSStore) tagDigests(repo string) (map[string]digest.Digest, error) {
	files, err := os.ReadDir(s.repoPath(repo, "_tags"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]digest.Digest{}
	for _, f := range files {
		data, err := os.ReadFile(s.repoPath(repo, "_tags", f.Name()))
		if err != nil {
			continue // removed meanwhile
		}
		out[f.Name()] = digest.Digest(data)
	}
	return out, nil
}

// Tags implements Store.
func (s *FSStore) Tags(_ context.Context, repo string) ([]string, error) {
	if _, err := os.Stat(s.repoPath(repo)); err != nil {
		return nil, notFound(err)
	}
	tags, err := s.tagDigests(repo)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(tags))
	for t := range tags {
		out = append(out, t)
	}
	slices.Sort(out)
	return out, nil
}

// Repositories implements Store.
func (s *FSStore) Repositories(_ context.Context) ([]string, error) {
	root := filepath.Join(s.dir, "repos")
	var out []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() || path == root {
			return err
		}
		if strings.HasPrefix(e.Name(), "_") {
			repo, _ := filepath.Rel(root, filepath.Dir(path))
			if !slices.Contains(out, filepath.ToSlash(repo)) {
				out = append(out, filepath.ToSlash(repo))
			}
			return filepath.SkipDir
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// writeBytes writes data to path by a rename.
func (s *FSStore) writeBytes(path string, data []byte) error {
	return s.write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// write makes path appear whole: written in the store's tmp directory,
// synced, then renamed into place.
func (s *FSStore) write(path string, fill func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "w-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("registry store: %w", err)
	}
	return os.Rename(f.Name(), path)
}

// notFound maps a missing file to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}
