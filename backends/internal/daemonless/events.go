package daemonless

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// The event journal (<data>/events/events.jsonl): see records.Events.

// Event appends one container event; an event that cannot be written is
// lost, the operation that caused it is not failed for it.
func (c *Core) Event(action string, st records.Container) { records.Event(c.journal(), action, st) }

// Events streams container events from the journal: history from Since,
// then live ones, until Until or ctx ends.
func (c *Core) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	return records.Events(ctx, c.journal(), o)
}
