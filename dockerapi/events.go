package dockerapi

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// eventMessage is an Engine event with the legacy top-level fields
// (status, id, from) that older clients still read next to Type/Action/Actor.
type eventMessage struct {
	Status   string     `json:"status,omitempty"`
	ID       string     `json:"id,omitempty"`
	From     string     `json:"from,omitempty"`
	Type     string     `json:"Type"`
	Action   string     `json:"Action"`
	Actor    eventActor `json:"Actor"`
	Scope    string     `json:"scope"`
	Time     int64      `json:"time"`
	TimeNano int64      `json:"timeNano"`
}

type eventActor struct {
	ID         string            `json:"ID"`
	Attributes map[string]string `json:"Attributes"`
}

func toMessage(e backends.Event) eventMessage {
	attrs := maps.Clone(e.Labels)
	if attrs == nil {
		attrs = map[string]string{}
	}
	attrs["name"] = e.Name
	if e.Image != "" {
		attrs["image"] = e.Image
	}
	if e.ExitCode != nil {
		attrs["exitCode"] = strconv.Itoa(*e.ExitCode)
	}
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	return eventMessage{
		Status: e.Action, ID: e.ID, From: e.Image, Type: "container", Action: e.Action,
		Actor: eventActor{ID: e.ID, Attributes: attrs}, Scope: "local", Time: t.Unix(), TimeNano: t.UnixNano(),
	}
}

// matchEvent applies the Engine's event filters: type, event, container,
// label, image.
func matchEvent(m eventMessage, f filters) bool {
	if !filterMatch(f["type"], func(v string) bool { return v == m.Type }) {
		return false
	}
	if !filterMatch(f["event"], func(v string) bool {
		return v == m.Action || strings.HasPrefix(m.Action, v+":")
	}) {
		return false
	}
	if !filterMatch(f["container"], func(v string) bool {
		return v == m.Actor.Attributes["name"] || strings.HasPrefix(m.Actor.ID, v)
	}) {
		return false
	}
	if !filterMatch(f["image"], func(v string) bool { return v == m.From }) {
		return false
	}
	for _, l := range f["label"] {
		k, v, hasV := strings.Cut(l, "=")
		got, ok := m.Actor.Attributes[k]
		if !ok || (hasV && got != v) {
			return false
		}
	}
	return true
}

func (s *Server) eventsStream(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := parseFilters(q.Get("filters"))
	if err != nil {
		writeError(w, err)
		return
	}
	var since, until time.Time
	if v := q.Get("since"); v != "" {
		if since, err = unixTime(v); err != nil {
			writeError(w, invalidParam("invalid since %q", v))
			return
		}
	}
	if v := q.Get("until"); v != "" {
		if until, err = unixTime(v); err != nil {
			writeError(w, invalidParam("invalid until %q", v))
			return
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var events <-chan backends.Event
	if es, err := backends.Want[backends.EventSource](s.b, backends.FeatureEvents, "events"); err == nil {
		// The backend replays from Since and ends the stream at Until.
		events, _ = es.Events(ctx, backends.EventOptions{Since: since, Until: until})
	} else {
		if !until.IsZero() {
			var c context.CancelFunc
			ctx, c = context.WithDeadline(ctx, until)
			defer c()
		}
		events = s.pollEvents(ctx)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flush(w)
	enc := json.NewEncoder(flushWriter{w})
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			m := toMessage(e)
			if !until.IsZero() && e.Time.After(until) {
				return
			}
			if matchEvent(m, f) && enc.Encode(m) != nil {
				return
			}
		}
	}
}

// pollEvents synthesizes create/start/die/destroy events by comparing
// container lists, for backends without an event stream.
func (s *Server) pollEvents(ctx context.Context) <-chan backends.Event {
	out := make(chan backends.Event, 16)
	go func() {
		defer close(out)
		prev := map[string]backends.Container{}
		first := true
		for {
			cs, err := s.b.List(ctx, backends.ListOptions{All: true})
			if err == nil {
				cur := map[string]backends.Container{}
				for _, c := range cs {
					cur[c.ID] = c
				}
				if !first {
					for _, e := range diffEvents(prev, cur) {
						select {
						case out <- e:
						case <-ctx.Done():
							return
						}
					}
				}
				prev, first = cur, false
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return out
}

func diffEvents(prev, cur map[string]backends.Container) []backends.Event {
	var out []backends.Event
	ev := func(c backends.Container, action string) backends.Event {
		return backends.Event{Time: time.Now(), Action: action, ID: c.ID, Name: c.Name, Image: c.Image, Labels: c.Labels}
	}
	for id, c := range cur {
		old, existed := prev[id]
		if !existed {
			out = append(out, ev(c, "create"))
		}
		if c.Running() && (!existed || !old.Running()) {
			out = append(out, ev(c, "start"))
		}
		if existed && old.Running() && !c.Running() {
			e := ev(c, "die")
			code := c.ExitCode
			e.ExitCode = &code
			out = append(out, e)
		}
	}
	for id, c := range prev {
		if _, ok := cur[id]; !ok {
			out = append(out, ev(c, "destroy"))
		}
	}
	return out
}
