package bare

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cornus-dev/cornus/backends/internal/records"
)

// stored is container.json in the container's directory (see
// records.Container).
type stored = records.Container

// store is the backend's containers: their container.json files under
// <data>/containers and their monitor records.
func (b *Backend) store() *records.Store {
	return &records.Store{Dir: b.cfg.containerDir, IDs: b.containerIDs, Records: b.records, TaskRunning: b.taskRunning}
}

// containerIDs lists the containers' directories.
func (b *Backend) containerIDs(_ context.Context) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(b.cfg.dataDir, "containers"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}
