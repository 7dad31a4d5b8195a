package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/internal/imageref"
	"github.com/cornus-dev/cornus/registry"
)

// The server's OCI registry (/v2/): a tenant's repositories are its own.
// The first push to a repository makes it the pusher's; no other tenant
// may read, list, push to or delete from it (to them it does not
// exist). cornus's own repository is the operator's: tenants cannot push
// there. A registry request authenticates with a client token, as the
// password of Basic (docker login) or as the Bearer token the registry's
// token endpoint hands back; caretaker tokens are refused.
//
// Where the backend has an image store of its own (registryStorer:
// containerd's content store, or dockerd's, libpod's, bare's and Incus's
// images through a staging store), the registry is a view of it: a repository's
// tags are the backend's images (app:1 is repository app's tag 1), so
// what a tenant pushes runs at once, and one name has one owner whichever
// way it came in (a load, a build or a push: imageowners.go). On
// kubernetes the registry keeps its content under the server's data
// directory, and the nodes pull from it (registrynodes.go).

// registryStorer is a backend whose own image store the registry serves;
// it may keep what its store cannot hold under dir.
type registryStorer interface {
	RegistryStore(dir string) (registry.Store, error)
}

// registryCollector is a store the server collects (registryGCEvery).
type registryCollector interface {
	GC(ctx context.Context, grace time.Duration) (registry.GCStats, error)
}

func newRegistry(dataDir string, s *Server) (*registry.Handler, error) {
	dir := filepath.Join(dataDir, "registry")
	var store registry.Store
	var err error
	if rs, ok := s.b.(registryStorer); ok {
		store, err = rs.RegistryStore(filepath.Join(dir, "store"))
	} else {
		store, err = registry.NewFSStore(filepath.Join(dir, "store"))
	}
	if err != nil {
		return nil, err
	}
	if c, ok := store.(registryCollector); ok {
		s.registryGC = c.GC
	}
	s.regStore = store
	if s.pullKey, err = loadPullKey(dir); err != nil {
		return nil, err
	}
	return registry.New(registry.Config{Store: store, Auth: registryAuth{s, store}, UploadDir: filepath.Join(dir, "uploads"),
		AdmitManifest: s.admitManifest,
		Authenticated: func(r *http.Request, principal string) {
			if tenant, node := strings.CutPrefix(principal, nodePrincipal); node {
				principal = tenant + " (pull credential)"
			}
			noteTenant(r, principal) // the request log's tenant
		}})
}

// registryGCEvery is how often the server collects its registry's own
// store; what is younger than it (a push whose manifest has not come
// yet) is kept.
const registryGCEvery = time.Hour

// collectRegistry frees, every registryGCEvery, what the registry's own
// store holds for no repository. A backend's own store is the backend's
// to collect (containerd's GC frees what the registry let go).
func (s *Server) collectRegistry(stop <-chan struct{}) {
	if s.registryGC == nil {
		return
	}
	every(stop, registryGCEvery, func() {
		st, err := s.registryGC(context.Background(), registryGCEvery)
		if err != nil {
			s.log.Warn("registry gc", "err", err)
		} else if st.Links+st.Blobs > 0 {
			s.log.Info("registry gc", "links", st.Links, "blobs", st.Blobs, "bytes", st.Bytes)
		}
	})
}

// registryAuth is the registry's view of the server's tokens and image
// owners.
type registryAuth struct {
	s     *Server
	store registry.Store
}

// Authenticate implements registry.Auth: client tokens, and the pull
// credentials the server hands the backend's nodes (registrynodes.go).
func (a registryAuth) Authenticate(secret string) (string, bool) {
	if tenant, ok := a.s.pullTenant(secret); ok {
		return nodePrincipal + tenant, true
	}
	id, ok := a.s.tokens.authenticate(secret) // re-reads a changed tokens file
	if !ok || id.tenant == "" {
		return "", false
	}
	return id.tenant, true
}

// Authorize implements registry.Auth.
func (a registryAuth) Authorize(ctx context.Context, principal, repo string, act registry.Action) error {
	tenant, node := strings.CutPrefix(principal, nodePrincipal)
	if node && act != registry.Pull {
		return fmt.Errorf("%w: a pull credential only pulls", registry.ErrDenied)
	}
	if act != registry.Pull && reserved(repo) {
		return fmt.Errorf("%w: %s is cornus's own repository (the caretaker image)", registry.ErrDenied, repo)
	}
	return a.s.imageOwners.useRepo(tenant, repo, act != registry.Pull, func() (bool, error) {
		_, err := a.store.Tags(ctx, repo)
		if errors.Is(err, registry.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	})
}

// Visible implements registry.Auth.
func (a registryAuth) Visible(_ context.Context, principal, repo string) bool {
	return a.s.imageOwners.repoIsFor(strings.TrimPrefix(principal, nodePrincipal), repo)
}

// ownsRepo reports whether repository repo is tenant's: pushed to or
// loaded into the registry by it first.
func (o *imageOwners) ownsRepo(tenant, repo string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Repos[imageref.Repo(repo)] == tenant
}

// repoIsFor reports whether repository repo is tenant's or nobody's.
func (o *imageOwners) repoIsFor(tenant, repo string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.repoOwnedByOther(tenant, imageref.Repo(repo))
}

// repoOwnedByOther reports whether a tenant other than tenant owns the
// repository (by a push to it) or any of its tags (by a load or a
// build); o.mu is held.
func (o *imageOwners) repoOwnedByOther(tenant, key string) bool {
	if owner := o.f.Repos[key]; owner != "" && owner != tenant {
		return true
	}
	for name, owner := range o.f.Tags {
		if owner != tenant && imageref.Repo(name) == key {
			return true
		}
	}
	return false
}

// useRepo lets tenant use repo: another tenant's is not found; a write
// to a repository nobody owns claims it first, unless the store holds
// images there already (held reports it): those are the operator's,
// shared read-only.
func (o *imageOwners) useRepo(tenant, repo string, write bool, held func() (bool, error)) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := imageref.Repo(repo)
	switch {
	case o.repoOwnedByOther(tenant, key):
		return fmt.Errorf("%w: repository %s", registry.ErrNotFound, repo)
	case !write || o.f.Repos[key] == tenant:
		return nil
	}
	shared, err := held()
	if err != nil {
		return fmt.Errorf("repository %s: %w", repo, err)
	}
	if shared {
		return fmt.Errorf("%w: repository %s holds images no tenant owns (shared with every tenant, read-only): push under another name", registry.ErrDenied, repo)
	}
	if o.f.Repos == nil {
		o.f.Repos = map[string]string{}
	}
	o.f.Repos[key] = tenant
	return writeFileAtomic(o.path, o.f)
}
