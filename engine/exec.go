package engine

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// ExecOptions name a service replica and the process to run in it.
type ExecOptions struct {
	Service string
	Index   int // replica, 1-based; 0 means 1
	backends.ExecOptions
}

// Exec runs a process in a running service container and returns its exit
// code.
func (e *Engine) Exec(ctx context.Context, project string, o ExecOptions) (int, error) {
	if err := e.policy.CheckExec("services."+o.Service+".exec", o.Privileged); err != nil {
		return -1, err
	}
	c, err := e.service(ctx, project, o.Service, o.Index)
	if err != nil {
		return -1, err
	}
	if !c.Running() {
		return -1, fmt.Errorf("container %s is not running (%s): %w", c.Name, c.State, errdefs.ErrConflict)
	}
	return e.b.Exec(ctx, c.ID, o.ExecOptions)
}
