package containerd

import (
	"context"
	"time"

	"github.com/containerd/containerd/v2/client"
)

// IDs lists the containers containerd knows.
func (d driver) IDs(ctx context.Context) ([]string, error) {
	cs, err := d.b.cli.Containers(d.b.ns(ctx))
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID())
	}
	return ids, nil
}

// Running asks containerd whether the container's task runs.
func (d driver) Running(id string) bool {
	ctx, cancel := context.WithTimeout(d.b.ns(context.Background()), 2*time.Second)
	defer cancel()
	_, task, err := d.task(ctx, id)
	if err != nil {
		return false
	}
	st, err := task.Status(ctx)
	return err == nil && (st.Status == client.Running || st.Status == client.Paused)
}
