package server

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/docker/go-units"

	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/registry"
)

// DefaultRegistryQuota is what one tenant may keep in the registry when
// CORNUS_REGISTRY_QUOTA does not say.
const DefaultRegistryQuota = 100 << 30

// registryQuota is cfg's quota: its own, else the environment's, else
// the default.
func registryQuota(cfg Config) (int64, error) {
	if cfg.RegistryQuota > 0 {
		return cfg.RegistryQuota, nil
	}
	v := envlist.Get(cfg.Environ, EnvRegistryQuota)
	if v == "" {
		return DefaultRegistryQuota, nil
	}
	n, err := units.RAMInBytes(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: want a size such as 20GiB", EnvRegistryQuota, v)
	}
	return n, nil
}

// withinQuota refuses what would take tenant's registry content past the
// quota: adding bytes (an archive about to be imported), or manifests
// about to be stored. What a tenant keeps is its repositories' manifests
// and the blobs they name, each once (registry.Usage).
func (s *Server) withinQuota(ctx context.Context, tenant string, adding int64, extra ...registry.RepoManifest) error {
	all, err := s.regStore.Repositories(ctx)
	if err != nil {
		return fmt.Errorf("registry quota: %w", err)
	}
	var repos []string
	for _, r := range all {
		if s.imageOwners.ownsRepo(tenant, r) {
			repos = append(repos, r)
		}
	}
	used, err := registry.Usage(ctx, s.regStore, repos, extra...)
	if err != nil {
		return fmt.Errorf("registry quota: %w", err)
	}
	if quota := s.cfg.RegistryQuota; used+adding > quota {
		return fmt.Errorf("%w: registry quota: tenant %s would keep %s in this server's registry, over its %s: delete images of yours first (or the operator raises %s)",
			errdefs.ErrOutOfRange, tenant, units.BytesSize(float64(used+adding)), units.BytesSize(float64(quota)), EnvRegistryQuota)
	}
	return nil
}

// admitManifest is the registry's AdmitManifest: a push within the
// pusher's quota.
func (s *Server) admitManifest(ctx context.Context, principal, repo string, m registry.Manifest) error {
	return s.withinQuota(ctx, principal, 0, registry.RepoManifest{Repo: repo, Manifest: m})
}
