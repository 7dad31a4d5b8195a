package incus

import (
	"context"
	"fmt"
	"io"

	"github.com/containerd/containerd/v2/core/images/archive"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/hostregistry"
	"github.com/cornus-dev/cornus/registry"
)

var _ backends.ImageSaver = (*Backend)(nil)

// RegistryStore is the server registry's store on this backend: its
// images, staged under dir (hostregistry). What is pushed is loaded into
// Incus and runs; an Incus image is pulled as ImageContent makes it (one
// layer of its root file system), since Incus keeps no layers.
func (b *Backend) RegistryStore(dir string) (registry.Store, error) {
	return hostregistry.New(b, dir, "")
}

// SaveImage writes ref as an OCI layout with docker save's manifest.json:
// the image ImageContent hands to builds.
func (b *Backend) SaveImage(ctx context.Context, ref string, w io.Writer) error {
	ic, err := b.ImageContent(ctx, ref)
	if err != nil {
		return err
	}
	defer ic.Release()
	if err := archive.Export(ctx, ic.Store, w, archive.WithManifest(ic.Target, ref)); err != nil {
		return fmt.Errorf("save image %s: %w", ref, err)
	}
	return nil
}
