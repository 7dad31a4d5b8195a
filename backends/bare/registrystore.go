package bare

import (
	"context"
	"fmt"
	"io"

	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/images/archive"
	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends/internal/hostregistry"
	"github.com/cornus-dev/cornus/registry"
)

// RegistryStore is the server registry's store on this backend: its
// images, staged under dir (hostregistry).
func (b *Backend) RegistryStore(dir string) (registry.Store, error) {
	return hostregistry.New(b, dir, "")
}

// SaveImage writes ref's manifest for this platform, as stored, with its
// config and layers: an OCI layout with docker save's manifest.json.
func (b *Backend) SaveImage(ctx context.Context, ref string, w io.Writer) error {
	release, err := b.images.useContent(false)
	if err != nil {
		return err
	}
	defer release()
	r, err := b.images.get(ctx, ref)
	if err != nil {
		return err
	}
	desc, err := platformManifest(ctx, b.images, r.name.Target)
	if err != nil {
		return fmt.Errorf("save image %s: %w", ref, err)
	}
	if err := archive.Export(ctx, b.images.content, w, archive.WithManifest(desc, r.name.Name)); err != nil {
		return fmt.Errorf("save image %s: %w", ref, err)
	}
	return nil
}

// platformManifest is target itself, or the manifest its index lists for
// this platform.
func platformManifest(ctx context.Context, s *imageStore, target ocispec.Descriptor) (ocispec.Descriptor, error) {
	if !images.IsIndexType(target.MediaType) {
		return target, nil
	}
	children, err := images.Children(ctx, s.content, target)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	match := platforms.Default()
	for _, c := range children {
		if c.Platform != nil && match.Match(*c.Platform) {
			return platformManifest(ctx, s, c)
		}
	}
	return ocispec.Descriptor{}, fmt.Errorf("no manifest for %s: %w", platforms.DefaultString(), errdefs.ErrNotFound)
}
