package bare

import (
	"context"
	"os"
	"time"
)

// IDs lists the containers' directories.
func (d driver) IDs(_ context.Context) ([]string, error) {
	entries, err := os.ReadDir(d.b.cfg.ContainersDir())
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

// Running asks the runtime whether the container runs.
func (d driver) Running(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs, err := d.b.rt.state(ctx, id)
	return err == nil && (rs.Status == "running" || rs.Status == "paused")
}
