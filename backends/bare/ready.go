package bare

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// ready makes what a container needs to run exist before each start:
// after a host reboot its overlay root is no longer mounted and its
// network namespace pin is a plain file (the namespace died with the
// host). Both are rebuilt from container.json: the root mounted again,
// the namespace created at the same path (config.json names it) and
// attached to the same networks, with its ports published again.
func (b *Backend) ready(ctx context.Context, st records.Container) error {
	if err := b.snap.mount(st.Layers, b.cfg.rootfsDir(st.ID), b.cfg.upperDir(st.ID), b.cfg.workDir(st.ID)); err != nil {
		return err
	}
	if st.Netns == "" || st.Spec.Network.Kind == "container" || st.Spec.Network.Kind == "host" || liveNetns(st.Netns) {
		return nil
	}
	// The attachments the records still hold go first (their leases,
	// their port rules).
	if _, err := b.Net.Detach(ctx, cni.DetachOptions{ContainerID: st.ID, Netns: st.Netns}); err != nil {
		return fmt.Errorf("rebuild the network of %s: %w", st.Name, err)
	}
	next := st
	var undo []func()
	nw, err := b.PrepareHost().Network(ctx, b.NetworkInput(st), &undo)
	if err != nil {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		return fmt.Errorf("rebuild the network of %s: %w", st.Name, err)
	}
	next.Netns, next.Networks, next.Ports = nw.Netns, nw.Networks, nw.Ports
	if next.Netns != st.Netns {
		return fmt.Errorf("rebuild the network of %s: its namespace moved from %s to %s", st.Name, st.Netns, next.Netns)
	}
	return b.Store().Write(next)
}

// liveNetns reports whether path is a live namespace (an nsfs file).
func liveNetns(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.NSFS_MAGIC
}
