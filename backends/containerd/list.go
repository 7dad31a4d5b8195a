package containerd

import (
	"context"
	"time"

	"github.com/containerd/containerd/v2/client"

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

// taskRunning asks containerd whether the container's task runs.
func (b *Backend) taskRunning(id string) bool {
	ctx, cancel := context.WithTimeout(b.ns(context.Background()), 2*time.Second)
	defer cancel()
	ctr, err := b.cli.LoadContainer(ctx, id)
	if err != nil {
		return false
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return false
	}
	st, err := task.Status(ctx)
	return err == nil && (st.Status == client.Running || st.Status == client.Paused)
}
