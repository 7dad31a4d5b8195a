package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/opencontainers/go-digest"
)

// GCStats is what a collection freed.
type GCStats struct {
	Links int   // repositories' links to blobs none of their manifests names
	Blobs int   // blobs no repository links or lists as a manifest
	Bytes int64 // the blobs' size
}

// GC frees what no repository holds, in two sweeps: first each
// repository's links to blobs that none of its manifests names, then the
// content no repository links or keeps as a manifest. Only what is older
// than grace goes: a push links its blobs before it puts the manifest
// that names them (and Blob refreshes a link it answers, so a manifest
// checked against its blobs finds them still linked). Manifests, tagged
// or not, are kept until deleted.
func (s *FSStore) GC(ctx context.Context, grace time.Duration) (GCStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := time.Now().Add(-grace)
	repos, err := s.Repositories(ctx)
	if err != nil {
		return GCStats{}, fmt.Errorf("registry gc: %w", err)
	}
	var st GCStats
	held := map[digest.Digest]bool{}
	for _, repo := range repos {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		named, err := s.named(ctx, repo)
		if err != nil {
			return st, fmt.Errorf("registry gc: %s: %w", repo, err)
		}
		for d := range named {
			held[d] = true
		}
		err = s.eachFile(s.repoPath(repo, "_blobs"), func(d digest.Digest, path string, e fs.DirEntry) error {
			info, err := e.Info()
			if err != nil {
				return ignoreGone(err)
			}
			if named[d] || info.ModTime().After(cutoff) {
				held[d] = true
				return nil
			}
			st.Links++
			return ignoreGone(os.Remove(path))
		})
		if err != nil {
			return st, fmt.Errorf("registry gc: %s: %w", repo, err)
		}
	}
	err = s.eachFile(filepath.Join(s.dir, "blobs"), func(d digest.Digest, path string, e fs.DirEntry) error {
		info, err := e.Info()
		if err != nil {
			return ignoreGone(err)
		}
		if held[d] || info.ModTime().After(cutoff) {
			return nil
		}
		st.Blobs++
		st.Bytes += info.Size()
		return ignoreGone(os.Remove(path))
	})
	if err != nil {
		return st, fmt.Errorf("registry gc: %w", err)
	}
	return st, nil
}

// named are the digests repo's manifests are and name (configs, layers,
// the manifests an index lists).
func (s *FSStore) named(ctx context.Context, repo string) (map[digest.Digest]bool, error) {
	ds, err := s.Manifests(ctx, repo)
	if err != nil {
		return nil, err
	}
	out := map[digest.Digest]bool{}
	for _, d := range ds {
		out[d] = true
		data, err := os.ReadFile(s.blobPath(d))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var m manifestFields
		if json.Unmarshal(data, &m) != nil {
			continue // kept as it was pushed; it names nothing we can read
		}
		if m.Config != nil {
			out[m.Config.Digest] = true
		}
		for _, l := range append(m.Layers, m.Manifests...) {
			out[l.Digest] = true
		}
	}
	return out, nil
}

// eachFile calls f for each ALG/HEX file under dir (none when dir is
// missing).
func (s *FSStore) eachFile(dir string, f func(digest.Digest, string, fs.DirEntry) error) error {
	algs, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, alg := range algs {
		files, err := os.ReadDir(filepath.Join(dir, alg.Name()))
		if err != nil {
			return err
		}
		for _, e := range files {
			d := digest.NewDigestFromEncoded(digest.Algorithm(alg.Name()), e.Name())
			if err := f(d, filepath.Join(dir, alg.Name(), e.Name()), e); err != nil {
				return err
			}
		}
	}
	return nil
}

func ignoreGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
