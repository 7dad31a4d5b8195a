package bare

import (
	"context"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// List returns containers whose labels match every filter label.
func (b *Backend) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	return b.store().List(ctx, o)
}

// Inspect returns a container by ID, ID prefix or name.
func (b *Backend) Inspect(ctx context.Context, ref string) (backends.ContainerDetails, error) {
	return b.store().Inspect(ctx, ref)
}

// taskRunning asks the runtime whether the container runs.
func (b *Backend) taskRunning(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs, err := b.rt.state(ctx, id)
	return err == nil && (rs.Status == "running" || rs.Status == "paused")
}
