package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// EventsOptions select compose events' events.
type EventsOptions struct {
	Services     []string // empty: all
	Since, Until time.Time
}

// Events calls fn with each container event of the project's selected
// services, as they happen, until ctx ends (or Until passes); a backend
// without events says so first.
func (e *Engine) Events(ctx context.Context, project string, o EventsOptions, fn func(backends.Event)) error {
	src, err := backends.Want[backends.EventSource](e.b, backends.FeatureEvents, "events")
	if err != nil {
		return err
	}
	evs, errc := src.Events(ctx, backends.EventOptions{Labels: projectLabels(project), Since: o.Since, Until: o.Until})
	for ev := range evs {
		if ServiceEvent(ev, o.Services) {
			fn(ev)
		}
	}
	if err := <-errc; err != nil && ctx.Err() == nil {
		return fmt.Errorf("events of %s: %w", project, err)
	}
	return nil
}

// ServiceEvent reports whether ev is of one of services (any, when
// none is named).
func ServiceEvent(ev backends.Event, services []string) bool {
	return len(services) == 0 || slices.Contains(services, ev.Labels[backends.ComposeService])
}
