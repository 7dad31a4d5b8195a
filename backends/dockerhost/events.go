package dockerhost

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Events streams container events whose labels match o.Labels. Both
// channels close when ctx ends or the stream fails; a failure other than
// ctx's end is sent on the error channel first.
func (b *Backend) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	f := labelFilters(o.Labels)
	f.Add("type", string(events.ContainerEventType))
	res := b.cli.Events(ctx, client.EventsListOptions{Since: unixTime(o.Since), Until: unixTime(o.Until), Filters: f})
	out := make(chan backends.Event)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		for {
			select {
			case m := <-res.Messages:
				select {
				case out <- event(m):
				case <-ctx.Done():
					return
				}
			case err := <-res.Err:
				if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					errc <- wrap(err, "container events")
				}
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, errc
}

// Event attributes that are not labels.
var eventAttributes = []string{"name", "image", "exitCode", "signal", "execID", "container"}

func event(m events.Message) backends.Event {
	attrs := m.Actor.Attributes
	e := backends.Event{
		Time:   time.Unix(0, m.TimeNano),
		Action: string(m.Action),
		ID:     m.Actor.ID,
		Name:   attrs["name"],
		Image:  attrs["image"],
		Labels: maps.Clone(attrs),
	}
	if m.TimeNano == 0 {
		e.Time = time.Unix(m.Time, 0)
	}
	for _, k := range eventAttributes {
		delete(e.Labels, k)
	}
	if s, ok := attrs["exitCode"]; ok {
		if n, err := strconv.Atoi(s); err == nil {
			e.ExitCode = &n
		}
	}
	return e
}
