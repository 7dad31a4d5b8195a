package daemonless

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

// Attach streams a container's output and feeds its stdin through the
// container's monitor (see records.Store.Attach).
func (c *Core) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	return c.Store().Attach(ctx, id, o, c.Logs)
}
