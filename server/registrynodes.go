package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/distribution/reference"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/imageref"
	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/spec"
)

// Where the backend's nodes pull every image themselves (kubernetes:
// backends.RegistryPuller), what a tenant loads or pushes lives in this
// server's registry, and the nodes pull it from there:
//   - `cornus image load --server` stores the archive's images in the
//     registry as the tenant's repositories (loadIntoRegistry);
//   - an up naming an image the registry holds (app:1, or
//     REGISTRY/app:1) runs REGISTRY/app@DIGEST, the image admitted, with
//     the tenant's pull credential for the runtime (registryImages).
//
// REGISTRY is Config.RegistryHost, how the nodes reach this server. The
// pull credential is the tenant's name under an HMAC with a key in the
// server's state: it pulls the tenant's repositories and the shared
// ones, nothing else, and stops working when the tenant has no client
// token left.

const (
	pullUsername    = "cornus-pull"
	pullTokenPrefix = "cornus-pull."
	// nodePrincipal prefixes a tenant authenticated by its pull
	// credential (no tenant name holds a NUL).
	nodePrincipal = "\x00pull:"
)

// nodesPull reports whether the backend's nodes pull images from this
// server's registry.
func (s *Server) nodesPull() bool {
	_, ok := s.b.(backends.RegistryPuller)
	return ok
}

// loadPullKey reads the pull credentials' key, made on first use.
func loadPullKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, "pull.key")
	key, err := os.ReadFile(path)
	if err == nil && len(key) == 32 {
		return key, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("registry pull key: %w", err)
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return nil, fmt.Errorf("registry pull key: %w", err)
	}
	return key, nil
}

// pullToken is tenant's pull credential.
func (s *Server) pullToken(tenant string) string {
	mac := hmac.New(sha256.New, s.pullKey)
	mac.Write([]byte(tenant))
	return pullTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(tenant)) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// pullTenant is the tenant whose pull credential secret is, while the
// tenant has a client token.
func (s *Server) pullTenant(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, pullTokenPrefix)
	enc, _, cut := strings.Cut(rest, ".")
	name, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || !cut || err != nil || len(s.pullKey) == 0 {
		return "", false
	}
	tenant := string(name)
	if !hmac.Equal([]byte(s.pullToken(tenant)), []byte(secret)) {
		return "", false
	}
	return tenant, s.tokens.hasTenant(tenant)
}

// registryHost is how the nodes reach the registry: Config.RegistryHost,
// else the address served on when it names a host, else the advertise
// URL's host; "" when none does.
func registryHost(cfg Config, served net.Addr) string {
	if cfg.RegistryHost != "" {
		return cfg.RegistryHost
	}
	if a, ok := served.(*net.TCPAddr); ok && a != nil && !a.IP.IsUnspecified() {
		return a.String()
	}
	if u, err := url.Parse(cfg.AdvertiseURL); err == nil && u.Host != "" {
		return u.Host
	}
	return ""
}

// registryName is the repository and reference (tag or digest) of an
// image this server's registry would hold: a name on its host, or a
// Docker Hub name (a load of app:1 is repository app's tag 1).
func (s *Server) registryName(image string) (repo, ref string, explicit, ok bool) {
	n, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", "", false, false
	}
	switch domain := reference.Domain(n); {
	case s.cfg.RegistryHost != "" && domain == s.cfg.RegistryHost:
		repo, explicit = reference.Path(n), true
	case domain == "docker.io":
		repo = reference.FamiliarName(n)
	default:
		return "", "", false, false
	}
	if d, digested := n.(reference.Digested); digested {
		return repo, d.Digest().String(), explicit, true
	}
	return repo, reference.TagNameOnly(n).(reference.Tagged).Tag(), explicit, true
}

// registryImages points p's images that the registry holds (and tenant
// may pull) at the registry, by digest, with tenant's pull credential,
// where the nodes pull. Where the registry is the backend's own store, an
// image named on the registry's host by tag is the backend's image of
// that name already: it runs as it is, with no pull (localRegistryImages).
func (s *Server) registryImages(ctx context.Context, tenant string, p spec.Project) (spec.Project, error) {
	if !s.nodesPull() {
		return s.localRegistryImages(p), nil
	}
	out := p
	out.Services = maps.Clone(p.Services)
	for _, name := range p.ServiceNames() {
		a := out.Services[name]
		repo, ref, explicit, ok := s.registryName(a.Image)
		if !ok || s.imageOwners.useRepo(tenant, repo, false, nil) != nil {
			continue // another registry's; another tenant's was refused at admission
		}
		m, err := s.regStore.Manifest(ctx, repo, ref)
		switch {
		case errors.Is(err, registry.ErrNotFound) && explicit:
			return p, fmt.Errorf("%w: services.%s.image: %s is not in this server's registry: push it there, or cornus image load --server", errdefs.ErrNotFound, name, a.Image)
		case errors.Is(err, registry.ErrNotFound):
			continue // the nodes pull it from its own registry
		case err != nil:
			return p, fmt.Errorf("services.%s.image %s: %w", name, a.Image, err)
		}
		a.Image = s.cfg.RegistryHost + "/" + repo + "@" + m.Digest.String()
		a.PullAuth = &spec.RegistryAuth{Server: s.cfg.RegistryHost, Username: pullUsername, Password: s.pullToken(tenant)}
		out.Services[name] = a
	}
	return out, nil
}

// notOnNodes refuses a name the nodes have already: the operator's,
// shared read-only. Loading even the very same image would do harm: the
// kubelet (KubeletEnsureSecretPulledImages) then takes the image as one
// pulled with a credential, and pods without it must pull it again.
func (s *Server) notOnNodes(ctx context.Context, name string) error {
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "images")
	if err != nil {
		return nil
	}
	_, err = imgs.InspectImage(ctx, name)
	switch {
	case errdefs.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("image %s: %w", name, err)
	}
	return fmt.Errorf("%w: image %s is on the cluster's nodes already (the operator's, shared with every tenant): use it as it is, or load yours under another name", errdefs.ErrPermissionDenied, name)
}

// localRegistryImages names p's images on the registry's host by their
// local names, where the registry is the backend's own store (admission
// checked the tenant may use them).
func (s *Server) localRegistryImages(p spec.Project) spec.Project {
	if _, native := s.b.(registryStorer); !native {
		return p
	}
	out := p
	out.Services = maps.Clone(p.Services)
	for name, a := range p.Services {
		repo, ref, explicit, ok := s.registryName(a.Image)
		if !ok || !explicit || strings.Contains(ref, ":") { // a digest: pulled as named
			continue
		}
		a.Image = repo + ":" + ref
		out.Services[name] = a
	}
	return out
}

// loadIntoRegistry is POST /v1/images/load where the nodes pull: the
// archive's images go into the registry, as the tenant's repositories.
func (s *Server) loadIntoRegistry(w http.ResponseWriter, r *http.Request, id identity) {
	if s.cfg.RegistryHost == "" {
		writeError(w, fmt.Errorf("%w: the %s backend's nodes pull every image, so a load goes into this server's registry, and no address of it is known that they could pull from: "+
			"start cornus serve with --registry-host HOST:PORT (%s)", errdefs.ErrFailedPrecondition, s.b.Name(), EnvRegistryHost))
		return
	}
	f, names, _, err := s.spoolArchive(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer removeSpooled(f)
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	for _, n := range names {
		if err := s.mayStore(r.Context(), id.tenant, n); err != nil {
			writeError(w, err)
			return
		}
	}
	if err := s.imageOwners.claim(id.tenant, names); err != nil {
		writeError(w, err)
		return
	}
	if err := s.withinQuota(r.Context(), id.tenant, fileSize(f)); err != nil {
		writeError(w, err)
		return
	}
	imported, err := registry.Import(r.Context(), s.regStore, f)
	if ae := (*registry.ArchiveError)(nil); errors.As(err, &ae) {
		err = fmt.Errorf("%w: %v", errdefs.ErrInvalidArgument, err)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	refs := []string{}
	for _, im := range imported {
		refs = append(refs, im.Name) // as the archive names it, as docker load prints it
	}
	writeJSON(w, http.StatusOK, refs)
}

// mayStore refuses to store image name in the registry as tenant's
// (a load or a build, where the nodes pull) when it is cornus's own, on
// the nodes already, or in a repository that is not the tenant's; else
// the repository is the tenant's from now on.
func (s *Server) mayStore(ctx context.Context, tenant, name string) error {
	if reserved(name) {
		return fmt.Errorf("%w: image %s: %s is cornus's own repository (the caretaker image): use another name", errdefs.ErrPermissionDenied, name, name)
	}
	if err := s.notOnNodes(ctx, name); err != nil {
		return err
	}
	repo := imageref.Repo(name)
	err := s.imageOwners.useRepo(tenant, repo, true, func() (bool, error) {
		_, err := s.regStore.Tags(ctx, repo)
		if errors.Is(err, registry.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	})
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrDenied) {
		err = fmt.Errorf("%w: image %s: %v: use another name", errdefs.ErrPermissionDenied, name, err)
	}
	return err
}
