package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/server/api"
)

// events is GET /v1/events?project=P[&since=&until=]: the backend's
// container events of one of the tenant's projects, as NDJSON frames
// whose Result is a backends.Event.
func (s *Server) events(w http.ResponseWriter, r *http.Request, id identity) {
	q := r.URL.Query()
	project := q.Get("project")
	if project == "" {
		writeError(w, fmt.Errorf("%w: events need ?project=NAME", errdefs.ErrInvalidArgument))
		return
	}
	if err := validProject(project); err != nil {
		writeError(w, err)
		return
	}
	if !s.owners.owns(id.tenant, project) {
		writeError(w, fmt.Errorf("%w: no project %s of yours", errdefs.ErrNotFound, project))
		return
	}
	src, err := backends.Want[backends.EventSource](s.b, backends.FeatureEvents, "events")
	if err != nil {
		writeError(w, err)
		return
	}
	o := backends.EventOptions{Labels: map[string]string{backends.LabelProject: project}}
	if o.Since, err = queryTime(q.Get("since")); err == nil {
		o.Until, err = queryTime(q.Get("until"))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	evs, errc := src.Events(ctx, o)
	f := newFrames(w)
	for e := range evs {
		// The project may have changed hands since the stream began (a
		// down, then another tenant's up): every event is checked.
		if !s.owners.owns(id.tenant, project) {
			cancel()
			continue // drain until the source ends
		}
		f.send(api.Frame{Result: e})
	}
	if err := <-errc; err != nil && r.Context().Err() == nil {
		e, _ := api.ErrorOf(err)
		f.send(api.Frame{Error: &e})
	}
}
