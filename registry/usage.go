package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opencontainers/go-digest"
)

// Usage is the bytes that repos' manifests keep in s, and extra (a
// manifest about to be stored): each manifest, config and layer counted
// once, by digest, at the size the store has for it (not the size a
// manifest claims). A blob no manifest names is not counted: the
// collection frees it.
func Usage(ctx context.Context, s Store, repos []string, extra ...RepoManifest) (int64, error) {
	sizes := map[digest.Digest]int64{}
	add := func(repo string, m Manifest) error {
		sizes[m.Digest] = int64(len(m.Data))
		var doc struct {
			Config *struct{ Digest digest.Digest }  `json:"config"`
			Layers []struct{ Digest digest.Digest } `json:"layers"`
		}
		if json.Unmarshal(m.Data, &doc) != nil {
			return nil // stored as pushed; only its own bytes count
		}
		blobs := make([]digest.Digest, 0, len(doc.Layers)+1)
		if doc.Config != nil {
			blobs = append(blobs, doc.Config.Digest)
		}
		for _, l := range doc.Layers {
			blobs = append(blobs, l.Digest)
		}
		for _, d := range blobs {
			if _, seen := sizes[d]; seen || d == "" {
				continue
			}
			n, err := s.Blob(ctx, repo, d)
			if errors.Is(err, ErrNotFound) {
				continue // unlinked since: not kept for this repository
			}
			if err != nil {
				return fmt.Errorf("blob %s: %w", d, err)
			}
			sizes[d] = n
		}
		return nil
	}
	for _, repo := range repos {
		ds, err := s.Manifests(ctx, repo)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("repository %s: %w", repo, err)
		}
		for _, d := range ds {
			m, err := s.Manifest(ctx, repo, d.String())
			if errors.Is(err, ErrNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				return 0, fmt.Errorf("repository %s: manifest %s: %w", repo, d, err)
			}
			if err := add(repo, m); err != nil {
				return 0, fmt.Errorf("repository %s: manifest %s: %w", repo, d, err)
			}
		}
	}
	for _, e := range extra {
		if err := add(e.Repo, e.Manifest); err != nil {
			return 0, fmt.Errorf("repository %s: manifest %s: %w", e.Repo, e.Manifest.Digest, err)
		}
	}
	var total int64
	for _, n := range sizes {
		total += n
	}
	return total, nil
}

// RepoManifest is a manifest and the repository it is (to be) in.
type RepoManifest struct {
	Repo     string
	Manifest Manifest
}
