package daemonless

import (
	"context"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/halfmade"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// A Create that dies half-way (cornus killed mid-up) leaves a container
// directory without container.json, and may have left a network
// attachment, a network namespace, the runtime's container (a snapshot,
// a mounted root) and volumes; whoever opens the backend next removes
// them (halfmade).

// halfMade is the backend's containers directory as package halfmade
// sees it.
func (c *Core) halfMade() halfmade.Store {
	return halfmade.Store{Dir: c.Cfg.ContainersDir(), Record: records.File, Net: c.Net, Volumes: c}
}

// removeAbandoned removes the runtime's container and the monitor record
// of a container whose Create died (Sweep has its networks, volumes and
// directory).
func (c *Core) removeAbandoned(ctx context.Context, id string) error {
	if err := c.rt.Delete(ctx, id); err != nil {
		return err
	}
	if err := c.Records.Remove(id); err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}
