package bare

import (
	"context"
	"fmt"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// PushImage pushes an image of the store to its registry, with auth
// alone.
func (b *Backend) PushImage(ctx context.Context, ref string, auth spec.RegistryAuth, progress func(backends.PullProgress)) error {
	unlock, err := b.images.useContent(false)
	if err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	defer unlock()
	r, err := b.images.get(ctx, ref)
	if err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pushing " + ref})
	}
	if err := b.PushManifest(ctx, r.name.Name, r.name.Target, b.images.content, auth); err != nil {
		return err
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pushed " + ref})
	}
	return nil
}
