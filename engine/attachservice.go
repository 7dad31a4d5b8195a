package engine

import (
	"context"
	"fmt"
	"io"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// AttachServiceOptions name a service replica to attach to (compose
// attach) and the streams to join.
type AttachServiceOptions struct {
	Service string
	Index   int // replica, 1-based; 0 means 1
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Resize  <-chan backends.TermSize
	TTY     bool // the container has a TTY: one stream (for a server's client)
}

// AttachService joins a running replica's stdio until it exits, and
// returns its exit code; when ctx ends first (the client detached), -1
// and no error: the container runs on.
func (e *Engine) AttachService(ctx context.Context, project string, o AttachServiceOptions) (int, error) {
	att, err := backends.Want[backends.Attacher](e.b, backends.FeatureAttach, "attach")
	if err != nil {
		return -1, err
	}
	c, err := e.service(ctx, project, o.Service, o.Index)
	if err != nil {
		return -1, err
	}
	if !c.Running() {
		return -1, fmt.Errorf("container %s is not running (%s): %w", c.Name, c.State, errdefs.ErrConflict)
	}
	err = att.Attach(ctx, c.ID, backends.AttachOptions{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Stream: true, Resize: o.Resize})
	if ctx.Err() != nil {
		return -1, nil // detached
	}
	if err != nil {
		return -1, fmt.Errorf("attach to %s: %w", c.Name, err)
	}
	code, err := e.b.Wait(ctx, c.ID)
	if err != nil {
		return -1, fmt.Errorf("wait for %s: %w", c.Name, err)
	}
	return code, nil
}
