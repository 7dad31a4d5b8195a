package backends

import (
	"fmt"

	"github.com/containerd/errdefs"
)

// ErrStaleTask marks a Start that failed because the runtime still holds a
// task for the container from before it crashed (dockerd killed between
// creating and starting the task answers "task ID: already exists" forever
// after). The container can never start again; the engine replaces it.
// It is an errdefs Conflict.
var ErrStaleTask = fmt.Errorf("%w: the runtime kept a task of this container from before it crashed, so it cannot start again: remove the container and create it anew", errdefs.ErrConflict)
