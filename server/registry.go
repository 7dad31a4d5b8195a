package server

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cornus-dev/cornus/registry"
)

// The server's OCI registry (/v2/): a tenant's repositories are its own.
// The first push to a repository makes it the pusher's; no other tenant
// may read, list, push to or delete from it (to them it does not
// exist). cornus's own repository is the operator's: tenants cannot push
// there. A registry request authenticates with a client token, as the
// password of Basic (docker login) or as the Bearer token the registry's
// token endpoint hands back; caretaker tokens are refused.

func newRegistry(dataDir string, auth registry.Auth) (*registry.Handler, error) {
	dir := filepath.Join(dataDir, "registry")
	store, err := registry.NewFSStore(filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	return registry.New(registry.Config{Store: store, Auth: auth, UploadDir: filepath.Join(dir, "uploads")})
}

// registryAuth is the registry's view of the server's tokens and image
// owners.
type registryAuth struct{ s *Server }

// Authenticate implements registry.Auth: client tokens only.
func (a registryAuth) Authenticate(secret string) (string, bool) {
	id, ok := a.s.tokens.authenticate(secret) // re-reads a changed tokens file
	if !ok || id.tenant == "" {
		return "", false
	}
	return id.tenant, true
}

// Authorize implements registry.Auth.
func (a registryAuth) Authorize(_ context.Context, tenant, repo string, act registry.Action) error {
	if act != registry.Pull && reserved(repo) {
		return fmt.Errorf("%w: %s is cornus's own repository (the caretaker image)", registry.ErrDenied, repo)
	}
	return a.s.imageOwners.useRepo(tenant, repo, act != registry.Pull)
}

// Visible implements registry.Auth.
func (a registryAuth) Visible(_ context.Context, tenant, repo string) bool {
	owner := a.s.imageOwners.repoOwner(repo)
	return owner == "" || owner == tenant
}

// repoOwner is the tenant that owns registry repository repo ("" for
// none).
func (o *imageOwners) repoOwner(repo string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Repos[repo]
}

// useRepo lets tenant use repo: another tenant's is not found; a write
// to a repository nobody owns claims it first.
func (o *imageOwners) useRepo(tenant, repo string, write bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch owner := o.f.Repos[repo]; {
	case owner == tenant:
		return nil
	case owner != "":
		return fmt.Errorf("%w: repository %s", registry.ErrNotFound, repo)
	case !write:
		return nil
	}
	if o.f.Repos == nil {
		o.f.Repos = map[string]string{}
	}
	o.f.Repos[repo] = tenant
	return writeFileAtomic(o.path, o.f)
}
