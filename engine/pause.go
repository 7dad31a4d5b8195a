package engine

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
)

// Pause freezes the selected services' running containers (compose
// pause); a backend that cannot says so before anything is paused.
func (e *Engine) Pause(ctx context.Context, project string, o LifecycleOptions) error {
	return e.pause(ctx, project, o, true)
}

// Unpause thaws the selected services' paused containers.
func (e *Engine) Unpause(ctx context.Context, project string, o LifecycleOptions) error {
	return e.pause(ctx, project, o, false)
}

func (e *Engine) pause(ctx context.Context, project string, o LifecycleOptions, freeze bool) error {
	verb, doing, done := "unpause", "Unpausing", "Unpaused"
	if freeze {
		verb, doing, done = "pause", "Pausing", "Paused"
	}
	if err := e.checkSpec(o.Spec); err != nil {
		return err
	}
	p, err := backends.Want[backends.Pauser](e.b, backends.FeaturePause, verb)
	if err != nil {
		return err
	}
	cs, err := e.selected(ctx, project, o.Services, !freeze)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		if freeze && c.State != backends.StateRunning || !freeze && c.State != backends.StatePaused {
			continue
		}
		g.Go(func() error {
			e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: doing})
			act := p.Unpause
			if freeze {
				act = p.Pause
			}
			if err := act(gctx, c.ID); err != nil {
				e.failed(ctx, c.Name, err)
				return fmt.Errorf("%s %s: %w", verb, c.Name, err)
			}
			e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: done, Done: true})
			return nil
		})
	}
	return g.Wait()
}
