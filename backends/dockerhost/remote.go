package dockerhost

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/envlist"
)

// EnvRemote "1" is the backend's remote mode (backends.RemoteModer): the
// daemon shares neither this host's mounts nor its networks, so `cornus
// serve` gives every replica a caretaker companion.
const EnvRemote = "CORNUS_DOCKER_REMOTE"

// RemoteMode reports whether EnvRemote turned remote mode on.
func (b *Backend) RemoteMode() (bool, string) { return b.remote, EnvRemote }

// CheckLocalMounts says the daemon takes a `cornus serve` session's
// client-local mounts as host binds: it shares this host's mounts, unless
// in remote mode.
func (b *Backend) CheckLocalMounts(context.Context) error {
	if b.remote {
		return fmt.Errorf("%w: in remote mode (%s=1) the Docker daemon does not share this host's mounts: the companions mount them", errdefs.ErrFailedPrecondition, EnvRemote)
	}
	return nil
}

// remoteOn reads EnvRemote: only "1" turns remote mode on.
func remoteOn(environ []string) bool { return envlist.Get(environ, EnvRemote) == "1" }
