package podman

import (
	"context"
	"fmt"
	"io"
	"net/url"

	"github.com/cornus-dev/cornus/backends/internal/hostregistry"
	"github.com/cornus-dev/cornus/registry"
)

// RegistryStore is the server registry's store on this backend:
// libpod's images, staged under dir (hostregistry).
func (b *Backend) RegistryStore(dir string) (registry.Store, error) {
	return hostregistry.New(b, dir, "localhost")
}

// SaveImage writes ref as a docker-archive (podman save).
func (b *Backend) SaveImage(ctx context.Context, ref string, w io.Writer) error {
	resp, err := b.cli.do(ctx, request{method: "GET", path: imagePath(ref, "get"), query: url.Values{"format": {"docker-archive"}}})
	if err != nil {
		return fmt.Errorf("save image %s: %w", ref, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("save image %s: %w", ref, err)
	}
	return nil
}
