package containerd

import (
	"context"

	"github.com/cornus-dev/cornus/backends/internal/records"
)

// stored is container.json in the container's directory (see
// records.Container).
type stored = records.Container

// store is the backend's containers: their container.json files, for
// the containers containerd knows, and their monitor records.
func (b *Backend) store() *records.Store {
	return &records.Store{Dir: b.cfg.containerDir, IDs: b.containerIDs, Records: b.records, TaskRunning: b.taskRunning}
}

// containerIDs lists the containers containerd knows.
func (b *Backend) containerIDs(ctx context.Context) ([]string, error) {
	cs, err := b.cli.Containers(b.ns(ctx))
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID())
	}
	return ids, nil
}
