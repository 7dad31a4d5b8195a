package dockerhost

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Events streams container events whose labels match o.Labels (and, with
// o.Networks, containers connected to or disconnected from networks). Both
// channels close when ctx ends or the stream fails; a failure other than
// ctx's end is sent on the error channel first.
//
// o.Subscribed is called once dockerd has answered GET /events with 200.
// dockerd sends those headers just before it subscribes, so the request
// then also replays from the time of this call (dockerd keeps the last
// 256 events): nothing in between is lost.
func (b *Backend) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	since := o.Since
	var answered *atomic.Bool
	if o.Subscribed != nil {
		answered = new(atomic.Bool)
		ctx = context.WithValue(ctx, eventsAnsweredKey{}, answered)
		if since.IsZero() {
			since = time.Now()
		}
	}
	f := labelFilters(o.Labels)
	if o.Networks {
		// Network events carry no container labels: filter those here.
		f = client.Filters{}
		f.Add("type", string(events.NetworkEventType))
	}
	f.Add("type", string(events.ContainerEventType))
	// Returns once dockerd answered or the request failed.
	res := b.cli.Events(ctx, client.EventsListOptions{Since: unixTime(since), Until: unixTime(o.Until), Filters: f})
	out := make(chan backends.Event)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		if answered != nil && answered.Load() {
			o.Subscribed()
		}
		for {
			select {
			case m := <-res.Messages:
				e, ok := event(m, o)
				if !ok {
					continue
				}
				select {
				case out <- e:
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

// eventsAnsweredKey marks an events request whose 200 answer the response
// hook records: the moby client returns from Events both when dockerd
// answered and when the request failed (the error arrives a moment later),
// so the answer is the only certain sign of a subscription.
type eventsAnsweredKey struct{}

// noteEventsAnswer is the client's response hook (see eventsAnsweredKey).
func noteEventsAnswer(resp *http.Response) {
	if resp.Request == nil || resp.StatusCode != http.StatusOK {
		return
	}
	if answered, ok := resp.Request.Context().Value(eventsAnsweredKey{}).(*atomic.Bool); ok {
		answered.Store(true)
	}
}

// Event attributes that are not labels.
var eventAttributes = []string{"name", "image", "exitCode", "signal", "execID", "container"}

// event maps a daemon message; ok is false for what o did not ask for.
func event(m events.Message, o backends.EventOptions) (e backends.Event, ok bool) {
	attrs := m.Actor.Attributes
	t := time.Unix(0, m.TimeNano)
	if m.TimeNano == 0 {
		t = time.Unix(m.Time, 0)
	}
	if m.Type == events.NetworkEventType {
		if m.Action != events.ActionConnect && m.Action != events.ActionDisconnect {
			return e, false
		}
		return backends.Event{Time: t, Action: string(m.Action), ID: attrs["container"]}, true
	}
	if o.Networks && !backends.MatchLabels(attrs, o.Labels) {
		return e, false
	}
	e = backends.Event{
		Time:   t,
		Action: string(m.Action),
		ID:     m.Actor.ID,
		Name:   attrs["name"],
		Image:  attrs["image"],
		Labels: maps.Clone(attrs),
	}
	for _, k := range eventAttributes {
		delete(e.Labels, k)
	}
	if s, ok := attrs["exitCode"]; ok {
		if n, err := strconv.Atoi(s); err == nil {
			e.ExitCode = &n
		}
	}
	return e, true
}
