package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// stopWith overrides how a container stops.
type stopWith struct {
	Timeout *time.Duration // nil: the container's own grace period
	PreStop []spec.Hook    // run before the stop signal
}

// stop runs preStop hooks (best effort: a failing hook must not keep a
// container alive), then stops the container with its stop signal and
// grace period.
func (e *Engine) stop(ctx context.Context, c backends.Container, o *stopWith) error {
	if !c.Running() {
		return nil
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Stopping"})
	var opts backends.StopOptions
	if o != nil {
		if len(o.PreStop) > 0 {
			_ = e.runHooks(ctx, c.ID, c.Name, "preStop", o.PreStop)
		}
		opts.Timeout = o.Timeout
	}
	if err := e.b.Stop(ctx, c.ID, opts); err != nil {
		e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Error", Text: err.Error(), Done: true, Err: true})
		return fmt.Errorf("stop %s: %w", c.Name, err)
	}
	e.mu.Lock()
	delete(e.health, c.ID)
	e.mu.Unlock()
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Stopped", Done: true})
	return nil
}
