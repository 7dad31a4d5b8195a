package server

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/containerd/errdefs"
	"github.com/distribution/reference"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/internal/imageref"
)

// Images in the backend's store are shared by every tenant of the server,
// so the server keeps who loaded what (images.json): the tags a tenant
// loaded are its own, no other tenant may overwrite, list or run them,
// and neither may it reach the same image by ID or another tag. Images no
// tenant loaded (the operator's) are shared by all, read-only: a tenant
// cannot load over their tags. cornus's own repository (the caretaker's
// agent image) is reserved.

type imageOwners struct {
	path string
	mu   sync.Mutex
	f    imageOwnersFile
}

type imageOwnersFile struct {
	Tags map[string]string   `json:"tags"` // normalized name → tenant
	IDs  map[string][]string `json:"ids"`  // image ID → tenants that loaded it
	// Repos are the registry's repositories (registry.go) → the tenant
	// that first pushed to one.
	Repos map[string]string `json:"repos,omitempty"`
}

func loadImageOwners(path string) (*imageOwners, error) {
	o := &imageOwners{path: path, f: imageOwnersFile{Tags: map[string]string{}, IDs: map[string][]string{}}}
	data, err := boundedfile.Read(path, boundedfile.ServerState)
	if errors.Is(err, os.ErrNotExist) {
		return o, nil
	}
	if err != nil {
		return nil, fmt.Errorf("image owners: %w", err)
	}
	if err := json.Unmarshal(data, &o.f); err != nil {
		return nil, fmt.Errorf("image owners %s: %w", path, err)
	}
	if o.f.Tags == nil {
		o.f.Tags = map[string]string{}
	}
	if o.f.IDs == nil {
		o.f.IDs = map[string][]string{}
	}
	return o, nil
}

// imageName normalizes a reference (docker.io/library/x:latest), or
// returns it as it is when it does not parse (an ID).
func imageName(ref string) string { return imageref.Full(ref) }

func imageKey(id string) string { return strings.TrimPrefix(id, "sha256:") }

// reserved reports whether a name is in cornus's own repository.
func reserved(name string) bool {
	n, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return false
	}
	return reference.FamiliarName(n) == caretaker.AgentRepo
}

// tagOwner is who loaded, built or pushed name ("" for none).
func (o *imageOwners) tagOwner(name string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ownerOf(name)
}

// ownerOf is name's owner: the tenant that loaded or built it, else the
// one that pushed to its repository (registry.go); o.mu is held.
func (o *imageOwners) ownerOf(name string) string {
	if owner := o.f.Tags[imageName(name)]; owner != "" {
		return owner
	}
	return o.f.Repos[imageref.Repo(name)]
}

// idOwners are the tenants that loaded image id.
func (o *imageOwners) idOwners(id string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.f.IDs[imageKey(id)])
}

// record makes tenant the owner of the names it loaded and their images.
func (o *imageOwners) record(tenant string, names []string, ids []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range names {
		o.f.Tags[imageName(n)] = tenant
	}
	for _, id := range ids {
		k := imageKey(id)
		if !slices.Contains(o.f.IDs[k], tenant) {
			o.f.IDs[k] = append(o.f.IDs[k], tenant)
		}
	}
	return writeFileAtomic(o.path, o.f)
}

// visible reports whether tenant may see and use img: one of its tags is
// the tenant's own or nobody's (the operator's, shared by all: another
// tenant's tag on the same image, as a build that adds nothing to its
// base makes, hides it from no one); an untagged image, when the tenant
// loaded it or no tenant did.
func (o *imageOwners) visible(tenant string, img backends.Image) bool {
	if len(img.Tags) > 0 {
		return len(o.visibleTags(tenant, img)) > 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ids := o.f.IDs[imageKey(img.ID)]
	return len(ids) == 0 || slices.Contains(ids, tenant)
}

// visibleTags are img's tags tenant may see: its own and nobody's.
func (o *imageOwners) visibleTags(tenant string, img backends.Image) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, t := range img.Tags {
		if owner := o.ownerOf(t); owner == "" || owner == tenant {
			out = append(out, t)
		}
	}
	return out
}

// claim makes names tenant's before anything is written under them,
// refusing any another tenant holds: of two tenants admitted to write
// one new name at once, the second is refused here.
func (o *imageOwners) claim(tenant string, names []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range names {
		if owner := o.ownerOf(n); owner != "" && owner != tenant {
			return fmt.Errorf("%w: image %s is another tenant's: use another name", errdefs.ErrPermissionDenied, n)
		}
	}
	for _, n := range names {
		o.f.Tags[imageName(n)] = tenant
	}
	return writeFileAtomic(o.path, o.f)
}

// checkRef refuses an image reference in tenant's spec that names
// another tenant's image (by tag, or by ID or another tag of an image
// only other tenants loaded) or cornus's reserved repository.
func (s *Server) checkImageRef(r *admission, at, ref string) error {
	if reserved(ref) {
		return fmt.Errorf("%w: %s: %s is cornus's own repository (the caretaker image); tenants cannot use it", errdefs.ErrPermissionDenied, at, ref)
	}
	if owner := s.imageOwners.tagOwner(ref); owner != "" && owner != r.tenant {
		return fmt.Errorf("%w: %s: image %s is another tenant's", errdefs.ErrPermissionDenied, at, ref)
	}
	if repo, _, explicit, ok := s.registryName(ref); ok && explicit && s.imageOwners.useRepo(r.tenant, repo, false, nil) != nil {
		return fmt.Errorf("%w: %s: image %s is another tenant's", errdefs.ErrPermissionDenied, at, ref)
	}
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "images")
	if err != nil {
		return nil
	}
	img, err := imgs.InspectImage(r.ctx, ref)
	if errdefs.IsNotFound(err) {
		return nil // not here: pulled, or the up fails naming it
	}
	if err != nil { // unknown is not the tenant's
		return fmt.Errorf("%s: image %s: %w", at, ref, err)
	}
	if !s.imageOwners.visible(r.tenant, img) {
		return fmt.Errorf("%w: %s: image %s is another tenant's", errdefs.ErrPermissionDenied, at, ref)
	}
	return nil
}

// archiveImages reads the names and config IDs an image archive holds
// (docker-archive manifest.json, OCI layout index.json and the manifests
// it points to) without loading it.
func archiveImages(f io.ReadSeeker) (names, ids []string, err error) {
	blobs := map[string][]byte{}
	var manifest, index []byte
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: image archive: %v", errdefs.ErrInvalidArgument, err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag != tar.TypeReg || h.Size > 1<<20 {
			continue // layers: not needed here
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: image archive: %v", errdefs.ErrInvalidArgument, err)
		}
		switch {
		case name == "manifest.json":
			manifest = data
		case name == "index.json":
			index = data
		case strings.HasPrefix(name, "blobs/sha256/"):
			blobs[strings.TrimPrefix(name, "blobs/sha256/")] = data
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	if manifest != nil {
		var ms []struct {
			Config   string
			RepoTags []string
		}
		if err := json.Unmarshal(manifest, &ms); err != nil {
			return nil, nil, fmt.Errorf("%w: image archive: manifest.json: %v", errdefs.ErrInvalidArgument, err)
		}
		for _, m := range ms {
			names = append(names, m.RepoTags...)
			c := strings.TrimSuffix(strings.TrimPrefix(m.Config, "blobs/sha256/"), ".json")
			ids = append(ids, c)
		}
	}
	if index != nil {
		var idx struct {
			Manifests []struct {
				Digest      string
				Annotations map[string]string
			}
		}
		if err := json.Unmarshal(index, &idx); err != nil {
			return nil, nil, fmt.Errorf("%w: image archive: index.json: %v", errdefs.ErrInvalidArgument, err)
		}
		for _, m := range idx.Manifests {
			for _, k := range []string{"io.containerd.image.name", "org.opencontainers.image.ref.name"} {
				if v := m.Annotations[k]; v != "" && strings.ContainsAny(v, ":/") {
					names = append(names, v)
				}
			}
			var mf struct{ Config struct{ Digest string } }
			if json.Unmarshal(blobs[strings.TrimPrefix(m.Digest, "sha256:")], &mf) == nil && mf.Config.Digest != "" {
				ids = append(ids, strings.TrimPrefix(mf.Config.Digest, "sha256:"))
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), ids, nil
}
