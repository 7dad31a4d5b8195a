package podman

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// maxEventLine bounds one event of the stream.
const maxEventLine = 1 << 20

// eventWire is one event of GET /libpod/events.
type eventWire struct {
	Type   string `json:"Type"`
	Action string `json:"Action"`
	Actor  struct {
		ID         string            `json:"ID"`
		Attributes map[string]string `json:"Attributes"`
	} `json:"Actor"`
	Time     int64 `json:"time"`
	TimeNano int64 `json:"timeNano"`
	// HealthStatus is a health_status event's status (podman 4.3 and 5;
	// see Events for what podman 4's means).
	HealthStatus string `json:"HealthStatus"`
}

// Podman's action names that Docker spells differently.
var dockerActions = map[string]string{
	"died": "die", "remove": "destroy", "exec": "exec_start", "exec_died": "exec_die",
}

// Event attributes that are not labels.
var eventAttributes = []string{"name", "image", "containerExitCode", "podId", "health_status", "network", "container"}

// Events streams container events whose labels match o.Labels (and, with
// o.Networks, containers connected to or disconnected from networks). Both
// channels close when ctx ends, at o.Until, or when the stream fails; a
// failure other than ctx's end is sent on the error channel first.
//
// o.Subscribed is called once podman answered the request; the request
// then also replays from the time of this call, so nothing between the
// call and podman's subscription is lost.
//
// Podman 4.3 is never sent until: its log reader stops on the wall clock
// at until, so an until that passes while it still reads the log ends the
// answer after an event or none. With o.Until, the log up to now is read
// once (stream=false), then, while o.Until is ahead, streamed from there
// until then.
//
// Health: podman records a health_status event per probe, and podman 4's
// carries the status from before the probe. As Docker does, one is sent
// only when a container's status changed; for a live event the status is
// the container's current one (its inspect), for a replayed one podman's.
func (b *Backend) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	out := make(chan backends.Event)
	errc := make(chan error, 1)
	now := time.Now()
	since := o.Since
	if o.Subscribed != nil && since.IsZero() {
		since = now
	}
	f := map[string][]string{"type": {"container"}}
	if o.Networks {
		f["type"] = append(f["type"], "network") // labels are matched here then
	} else if len(o.Labels) > 0 {
		f["label"] = labelFilters(o.Labels)
	}
	query := func(stream bool, since time.Time) url.Values {
		q := url.Values{"stream": {strconv.FormatBool(stream)}, "filters": {filters(f)}}
		if !since.IsZero() {
			q.Set("since", since.Format(time.RFC3339Nano))
		}
		return q
	}
	go func() {
		defer close(errc)
		defer close(out)
		es := &eventStream{b: b, o: o, out: out, now: now, health: map[string]string{}}
		if err := es.read(ctx, query, since); err != nil && ctx.Err() == nil {
			errc <- fmt.Errorf("container events: %w", err)
		}
	}()
	return out, errc
}

// eventStream sends podman's events as cornus's.
type eventStream struct {
	b   *Backend
	o   backends.EventOptions
	out chan<- backends.Event
	now time.Time // events from now on are live
	// health holds the status last sent, by container ID.
	health map[string]string
	// seen holds the events a stream may repeat: of the log's first read
	// (after seam), or an unbounded stream's recent ones.
	seen  map[eventKey]bool
	seam  time.Time
	prune int // the size of seen at which an unbounded stream lets old keys go
	sent  int // events read and not skipped as repeats
}

// unbounded: the stream runs until ctx ends, remembering the events of
// the last eventSeam, which a stream asked for again repeats.
func (es *eventStream) unbounded() bool { return es.o.Until.IsZero() }

// remember keeps an event's key; for a stream, the keys older than
// eventSeam are let go from time to time.
func (es *eventStream) remember(k eventKey) {
	es.seen[k] = true
	if !es.unbounded() || len(es.seen) < es.prune {
		return
	}
	old := time.Now().Add(-2 * eventSeam).UnixNano()
	for k := range es.seen {
		if k.time < old {
			delete(es.seen, k)
		}
	}
	es.prune = max(1024, 2*len(es.seen))
}

// read reads the log: as a stream when nothing bounds it, else once up to
// now and then as a stream until o.Until.
func (es *eventStream) read(ctx context.Context, query func(bool, time.Time) url.Values, since time.Time) error {
	if es.unbounded() {
		return es.stream(ctx, query, since)
	}
	// Podman's processes write the log, each with its own clock reading:
	// the stream starts a little before the first read ended, and skips
	// what that read sent already.
	read := time.Now()
	es.seen, es.seam = map[eventKey]bool{}, read.Add(-eventSeam)
	err := es.b.readEvents(ctx, query(false, since), es.o.Subscribed, es.emitter(ctx))
	if err != nil || ctx.Err() != nil || !es.o.Until.After(read) {
		return err
	}
	from := es.seam
	if from.Before(since) {
		from = since
	}
	es.seam = time.Time{}
	sctx, cancel := context.WithDeadline(ctx, es.o.Until)
	defer cancel()
	// The stream's end is the end of the events asked for, whatever ended
	// it: Until's deadline, or a stream that broke before it (that error
	// goes unreported, as it always has).
	_ = es.b.readEvents(sctx, query(true, from), nil, es.emitter(ctx))
	return nil
}

// stream reads the log as a stream until ctx ends. Podman may end an
// answer while ctx lives (CI71: a stream closed before the destroy it
// awaited); the stream is then asked for again from a little before it
// ended, and what it repeats is skipped, as after the bounded first read.
func (es *eventStream) stream(ctx context.Context, query func(bool, time.Time) url.Values, since time.Time) error {
	subscribed, first := es.o.Subscribed, cmp.Or(since, time.Now())
	es.seen, es.prune = map[eventKey]bool{}, 1024
	for quiet := 0; ; {
		sent, start := es.sent, time.Now()
		err := es.b.readEvents(ctx, query(true, since), subscribed, es.emitter(ctx))
		if err != nil || ctx.Err() != nil {
			return err
		}
		if es.sent == sent && time.Since(start) < time.Second {
			quiet++
		} else {
			quiet = 0
		}
		if quiet == maxQuietEnds {
			return fmt.Errorf("podman ended the event stream %d times in a row at once", quiet)
		}
		subscribed = nil
		if since = time.Now().Add(-eventSeam); since.Before(first) {
			since = first // nothing from before the events asked for
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(quiet) * 100 * time.Millisecond):
		}
	}
}

// maxQuietEnds is how many answers in a row that ended within a second
// and with no event a stream takes before it fails.
const maxQuietEnds = 5

// emitter sends an event unless it is past Until, a repeat, or a health
// status that did not change; false when ctx ended.
func (es *eventStream) emitter(ctx context.Context) func(eventWire) bool {
	return func(w eventWire) bool {
		e, ok := event(w, es.o)
		if !ok || !es.o.Until.IsZero() && e.Time.After(es.o.Until) {
			return true
		}
		if k := keyOf(w); es.seen != nil && es.seen[k] {
			return true
		} else if es.unbounded() || !es.seam.IsZero() && !e.Time.Before(es.seam) {
			es.remember(k)
		}
		es.sent++
		if !es.healthChanged(ctx, &e) {
			return true
		}
		select {
		case es.out <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// healthChanged tracks health statuses: a start forgets the last one; a
// health event is sent (with the current status if it is live) only when
// the status changed.
func (es *eventStream) healthChanged(ctx context.Context, e *backends.Event) bool {
	switch {
	case e.Action == "start":
		delete(es.health, e.ID)
	case strings.HasPrefix(e.Action, "health_status"):
		status := strings.TrimPrefix(strings.TrimPrefix(e.Action, "health_status"), ": ")
		if !e.Time.Before(es.now) {
			if d, err := es.b.inspect(ctx, e.ID); err == nil && d.State.Health != nil && d.State.Health.Status != "" {
				status = d.State.Health.Status
			}
		}
		if status == "" || es.health[e.ID] == status {
			return false
		}
		es.health[e.ID] = status
		e.Action = "health_status: " + status
	}
	return true
}

// eventSeam is how far before the end of the log's first read its stream
// starts again (see Events).
const eventSeam = 2 * time.Second

// eventKey identifies one event of podman's log.
type eventKey struct {
	id, action string
	time       int64 // ns
}

func keyOf(w eventWire) eventKey {
	return eventKey{id: w.Actor.ID, action: w.Action, time: cmp.Or(w.TimeNano, w.Time*int64(time.Second))}
}

// readEvents reads one answer of GET /libpod/events, calling subscribed
// once podman answered and emit for each event until it returns false.
func (b *Backend) readEvents(ctx context.Context, q url.Values, subscribed func(), emit func(eventWire) bool) error {
	resp, err := b.cli.do(ctx, request{method: "GET", path: "/events", query: q})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	if subscribed != nil {
		subscribed()
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	for sc.Scan() {
		var w eventWire
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			continue // not an event: skip it, keep the stream
		}
		if !emit(w) {
			return nil
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// event maps a podman event; ok is false for what o did not ask for.
func event(w eventWire, o backends.EventOptions) (backends.Event, bool) {
	attrs := w.Actor.Attributes
	t := time.Unix(0, w.TimeNano)
	if w.TimeNano == 0 {
		t = time.Unix(w.Time, 0)
	}
	if w.Type == "network" {
		if w.Action != "connect" && w.Action != "disconnect" {
			return backends.Event{}, false
		}
		// Podman's network events name the container as their actor.
		return backends.Event{Time: t, Action: w.Action, ID: cmp.Or(attrs["container"], w.Actor.ID)}, true
	}
	if w.Type != "container" || !backends.MatchLabels(attrs, o.Labels) {
		return backends.Event{}, false
	}
	action := w.Action
	if a, ok := dockerActions[action]; ok {
		action = a
	}
	if s := cmp.Or(w.HealthStatus, attrs["health_status"]); action == "health_status" && s != "" {
		action += ": " + s
	}
	e := backends.Event{Time: t, Action: action, ID: w.Actor.ID, Name: attrs["name"], Image: familiar(attrs["image"]), Labels: maps.Clone(attrs)}
	for _, k := range eventAttributes {
		delete(e.Labels, k)
	}
	if action == "die" {
		if n, err := strconv.Atoi(attrs["containerExitCode"]); err == nil {
			e.ExitCode = &n
		}
	}
	return e, true
}
