package bare

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes"
	"github.com/containerd/platforms"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// InspectImage returns a local image, or an errdefs.NotFound error.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	r, err := b.images.get(ctx, ref)
	if err != nil {
		return backends.Image{}, err
	}
	return imageOf(r, []string{daemonless.Familiar(r.name.Name)}), nil
}

func imageOf(r resolved, tags []string) backends.Image {
	c := r.config
	out := backends.Image{
		ID: r.configID.String(), Tags: tags, Size: r.size(), LastTagged: r.name.Updated,
		Entrypoint: c.Config.Entrypoint, Cmd: c.Config.Cmd, Env: c.Config.Env, WorkingDir: c.Config.WorkingDir,
		User: c.Config.User, Labels: c.Config.Labels, Architecture: c.Architecture, OS: c.OS, OnBuild: r.onBuild,
	}
	if c.Created != nil {
		out.Created = *c.Created
	}
	for p := range c.Config.ExposedPorts {
		out.ExposedPorts = append(out.ExposedPorts, p)
	}
	slices.Sort(out.ExposedPorts)
	return out
}

// ListImages lists local images, one entry per image with all its names.
func (b *Backend) ListImages(ctx context.Context) ([]backends.Image, error) {
	m, err := b.images.names()
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	byID := map[digest.Digest][]resolved{}
	var order []digest.Digest
	for _, name := range slices.Sorted(maps.Keys(m)) {
		r, err := b.images.resolve(ctx, m[name])
		if err != nil {
			continue // an image whose content is gone is not listed
		}
		if _, ok := byID[r.configID]; !ok {
			order = append(order, r.configID)
		}
		byID[r.configID] = append(byID[r.configID], r)
	}
	var out []backends.Image
	for _, id := range order {
		group := byID[id]
		var tags []string
		for _, r := range group {
			tags = append(tags, daemonless.Familiar(r.name.Name))
		}
		slices.Sort(tags)
		out = append(out, imageOf(group[0], tags))
	}
	return out, nil
}

// LoadImage imports a docker-archive or OCI-layout tar and unpacks its
// layers; layers unpacked already are not unpacked again.
func (b *Backend) LoadImage(ctx context.Context, tar io.Reader) ([]string, error) {
	unlock, err := b.images.useContent(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	names, err := b.images.importTar(ctx, tar)
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, n := range names {
		r, err := b.images.get(ctx, n)
		if err != nil {
			return nil, err
		}
		if _, err := b.snap.unpack(ctx, r); err != nil {
			return nil, err
		}
		refs = append(refs, daemonless.Familiar(n))
	}
	return refs, nil
}

// RemoveImage removes an image name, and with its last name its content
// and the unpacked layers nothing else uses.
func (b *Backend) RemoveImage(ctx context.Context, ref string, force bool) error {
	unlock, err := b.images.useContent(true)
	if err != nil {
		return err
	}
	defer unlock()
	all, err := b.Store().All(ctx)
	if err != nil {
		return err
	}
	inUse := map[digest.Digest]bool{}
	for _, st := range all {
		inUse[digest.Digest(st.ImageID)] = true
	}
	if err := b.images.remove(ctx, ref, inUse, force); err != nil {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	return b.collectLayers(ctx, all)
}

// collectLayers removes the unpacked layers no image and no container
// uses.
func (b *Backend) collectLayers(ctx context.Context, all []records.Container) error {
	keep := map[string]bool{}
	m, err := b.images.names()
	if err != nil {
		return err
	}
	for _, n := range m {
		if r, err := b.images.resolve(ctx, n); err == nil {
			for _, k := range b.snap.keys(r) {
				keep[k] = true
			}
		}
	}
	for _, st := range all {
		for _, k := range st.Layers {
			keep[k] = true
		}
	}
	return b.snap.collect(keep)
}

// PullImage fetches an image into the store and unpacks it; registries on
// loopback, and those in CORNUS_BARE_INSECURE_REGISTRIES, are spoken to
// over plain HTTP (daemonless.Core.Resolver).
func (b *Backend) PullImage(ctx context.Context, ref string, progress func(backends.PullProgress)) error {
	name, err := daemonless.Normalize(ref)
	if err != nil {
		return err
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pulling " + ref})
	}
	unlock, err := b.images.useContent(false)
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	defer unlock()
	resolver := b.Resolver()
	_, desc, err := resolver.Resolve(ctx, name)
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	fetcher, err := resolver.Fetcher(ctx, name)
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	cs := b.images.content
	handler := images.Handlers(remotes.FetchHandler(cs, fetcher),
		images.LimitManifests(images.FilterPlatforms(images.ChildrenHandler(cs), platforms.Default()), platforms.Default(), 1))
	if err := images.Dispatch(ctx, handler, nil, desc); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	if err := b.images.setNames(imageName{Name: name, Target: ocispec.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}, Updated: time.Now().UTC()}); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	r, err := b.images.get(ctx, name)
	if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	if _, err := b.snap.unpack(ctx, r); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pulled " + ref})
	}
	return nil
}
