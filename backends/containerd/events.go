package containerd

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/journal"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// The event journal (<data>/events/events.jsonl): see records.Events.

func (b *Backend) journal() *journal.Journal { return journal.Open(b.cfg.eventsDir()) }

// event appends one container event; an event that cannot be written is
// lost, the operation that caused it is not failed for it.
func (b *Backend) event(action string, st stored) { records.Event(b.journal(), action, st) }

// Events streams container events from the journal: history from Since,
// then live ones, until Until or ctx ends.
func (b *Backend) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	return records.Events(ctx, b.journal(), o)
}
