package containerd

import (
	"context"
	"path/filepath"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/halfmade"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// A Create that dies half-way (cornus killed mid-up) leaves a container
// directory without container.json, and may have left a network
// attachment, a network namespace, a containerd container and volumes;
// whoever opens the backend next removes them (halfmade).

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

// removeAbandoned removes the containerd container (with its snapshot)
// of a container whose Create died (Sweep has its networks,
// volumes and directory).
func (b *Backend) removeAbandoned(ctx context.Context, id string) error {
	ctx = b.ns(ctx)
	if ctr, err := b.cli.LoadContainer(ctx, id); err == nil {
		if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	if err := b.records.Remove(id); err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}
