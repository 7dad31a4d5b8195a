package daemonless

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

// List returns containers whose labels match every filter label.
func (c *Core) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	return c.Store().List(ctx, o)
}

// Inspect returns a container by ID, ID prefix or name.
func (c *Core) Inspect(ctx context.Context, ref string) (backends.ContainerDetails, error) {
	return c.Store().Inspect(ctx, ref)
}
