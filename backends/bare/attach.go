package bare

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

// Attach streams a container's output and feeds its stdin through the
// container's monitor (see records.Store.Attach).
func (b *Backend) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	return b.store().Attach(ctx, id, o, b.Logs)
}
