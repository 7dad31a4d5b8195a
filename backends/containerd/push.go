package containerd

import (
	"context"
	"fmt"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/spec"
)

// PushImage pushes a local image to its registry, with auth alone.
func (b *Backend) PushImage(ctx context.Context, ref string, auth spec.RegistryAuth, progress func(backends.PullProgress)) error {
	ctx = b.ns(ctx)
	name, err := daemonless.Normalize(ref)
	if err != nil {
		return err
	}
	img, err := b.cli.GetImage(ctx, name)
	if err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pushing " + ref})
	}
	if err := b.PushManifest(ctx, name, img.Target(), b.cli.ContentStore(), auth); err != nil {
		return err
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pushed " + ref})
	}
	return nil
}
