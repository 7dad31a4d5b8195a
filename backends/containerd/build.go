package containerd

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

var _ backends.Builder = (*Backend)(nil)

// BuildSite is this containerd itself: a buildkitd containerd worker on
// it (the builder starts one) stores what it builds in the backend's
// namespace, unpacked for its snapshotter.
func (b *Backend) BuildSite(context.Context) (backends.BuildSite, error) {
	return backends.BuildSite{Containerd: &backends.ContainerdSite{
		Address: b.cfg.address, Namespace: b.cfg.namespace, Snapshotter: b.cfg.snapshotter,
	}}, nil
}
