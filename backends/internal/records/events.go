package records

import (
	"context"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/journal"
)

// The event journal (<data>/events/events.jsonl) is written by whoever
// makes a container event happen: the backend for create, destroy,
// pause, unpause, rename, kill, stop, connect and disconnect, the
// container's monitor for start, die and health_status. So history
// survives the process that caused it, as docker events --since expects.

// Event appends one container event to j; an event that cannot be
// written is lost, the operation that caused it is not failed for it.
func Event(j *journal.Journal, action string, st Container) {
	_ = j.Append(journal.Event{Action: action, ID: st.ID, Name: st.Name, Image: st.Spec.Image, Labels: st.Spec.Labels})
}

// Events streams container events from the journal j: history from
// Since, then live ones, until Until or ctx ends.
func Events(ctx context.Context, j *journal.Journal, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	out := make(chan backends.Event)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		since := o.Since
		if since.IsZero() {
			since = time.Now() // no history asked for: live events only
		}
		err := j.Follow(ctx, since, o.Until, o.Subscribed, func(e journal.Event) bool {
			network := e.Action == "connect" || e.Action == "disconnect"
			if network && !o.Networks || !network && !backends.MatchLabels(e.Labels, o.Labels) {
				return true
			}
			select {
			case out <- backends.Event(e):
				return true
			case <-ctx.Done():
				return false
			}
		})
		if err != nil {
			errc <- err
		}
	}()
	return out, errc
}
