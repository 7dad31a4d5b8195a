package bare

import (
	"context"
	"path/filepath"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/halfmade"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// A Create that dies half-way (cornus killed mid-up) leaves a container
// directory without container.json, and may have left a network
// attachment, a network namespace, a runtime container, a mounted root
// and volumes; whoever opens the backend next removes them (halfmade).

// halfMade is the backend's containers directory as package halfmade
// sees it.
func (b *Backend) halfMade() halfmade.Store {
	return halfmade.Store{Dir: filepath.Join(b.cfg.dataDir, "containers"), Record: records.File, Net: b.net, Volumes: b}
}

// removeHalfMade removes every container a dead Create left behind, and
// network attachments of containers that no longer exist.
func (b *Backend) removeHalfMade(ctx context.Context) error {
	return b.halfMade().Sweep(ctx, b.removeAbandoned)
}

// removeAbandoned removes the runtime container and root of a
// container whose Create died (Sweep has its networks, volumes
// and directory).
func (b *Backend) removeAbandoned(ctx context.Context, id string) error {
	if err := b.rt.delete(ctx, id); err != nil {
		return err
	}
	if err := unmount(b.cfg.rootfsDir(id)); err != nil {
		return err
	}
	if err := b.records.Remove(id); err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}
