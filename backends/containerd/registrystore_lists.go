package containerd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/registry"
)

// The registry's lists on containerd's store: a repository's manifests
// and tags, and every repository.

// Manifests implements registry.Store.
func (s registryStore) Manifests(ctx context.Context, repo string) ([]digest.Digest, error) {
	ctx = s.ctx(ctx)
	imgs, err := s.repoImages(ctx, repo)
	if err != nil {
		return nil, err
	}
	out, err := s.pushedManifests(ctx, repo)
	if err != nil {
		return nil, err
	}
	for _, img := range imgs {
		out = append(out, img.Target.Digest)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// pushedManifests are the manifests pushed to repo, tagged or not.
func (s registryStore) pushedManifests(ctx context.Context, repo string) ([]digest.Digest, error) {
	var out []digest.Digest
	err := s.cs().Walk(ctx, func(info content.Info) error {
		out = append(out, info.Digest)
		return nil
	}, labelFilter(labelManifestIn+repoKey(repo)))
	if err != nil {
		return nil, fmt.Errorf("list manifests: %w", err)
	}
	return out, nil
}

// labelFilter matches content carrying label key.
func labelFilter(key string) string { return `labels."` + key + `"` }

// Tags implements registry.Store.
func (s registryStore) Tags(ctx context.Context, repo string) ([]string, error) {
	ctx = s.ctx(ctx)
	imgs, err := s.repoImages(ctx, repo)
	if err != nil {
		return nil, err
	}
	var tags []string
	for _, img := range imgs {
		_, tag, _ := repoTag(img.Name)
		tags = append(tags, tag)
	}
	if len(tags) == 0 {
		ds, err := s.pushedManifests(ctx, repo)
		if err != nil {
			return nil, err
		}
		if len(ds) == 0 {
			return nil, registry.ErrNotFound
		}
	}
	slices.Sort(tags)
	return tags, nil
}

// Repositories implements registry.Store: every image's, and those that
// content was pushed to.
func (s registryStore) Repositories(ctx context.Context) ([]string, error) {
	ctx = s.ctx(ctx)
	all, err := s.is().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	var out []string
	for _, img := range all {
		if repo, _, ok := repoTag(img.Name); ok {
			out = append(out, repo)
		}
	}
	err = s.cs().Walk(ctx, func(info content.Info) error {
		for k := range info.Labels {
			if r, ok := strings.CutPrefix(k, labelBlobIn); ok {
				out = append(out, r)
			} else if r, ok := strings.CutPrefix(k, labelManifestIn); ok {
				out = append(out, r)
			}
		}
		return nil
	}, labelFilter(labelGCRoot))
	if err != nil {
		return nil, fmt.Errorf("list repositories: %w", err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
