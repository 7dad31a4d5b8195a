package dockerhost

import (
	"context"
	"io"

	"github.com/cornus-dev/cornus/backends/internal/hostregistry"
	"github.com/cornus-dev/cornus/registry"
)

// RegistryStore is the server registry's store on this backend:
// dockerd's images, staged under dir (hostregistry).
func (b *Backend) RegistryStore(dir string) (registry.Store, error) {
	return hostregistry.New(b, dir, "")
}

// SaveImage writes ref as a docker-archive (docker save).
func (b *Backend) SaveImage(ctx context.Context, ref string, w io.Writer) error {
	rc, err := b.cli.ImageSave(ctx, []string{ref})
	if err != nil {
		return wrap(err, "save image %s", ref)
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return wrap(err, "save image %s", ref)
}
