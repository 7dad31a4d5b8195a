// Package termsize carries a terminal's size to a daemon's exec or attach
// resize call: the first size retried until the process has its TTY, then
// each change as it comes.
package termsize

import (
	"context"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// set sets the initial size; the process may not have its TTY yet, so a
// few failures are retried (as the docker CLI does).
func set(ctx context.Context, resize func(backends.TermSize) error, s backends.TermSize) {
	for i := range 10 {
		if resize(s) == nil || ctx.Err() != nil {
			return
		}
		time.Sleep(time.Duration(i+1) * 10 * time.Millisecond)
	}
}

// Follow resizes on each size from ch until done closes or ch does; a
// failed resize (the process ended) is not an error of the session.
func Follow(done <-chan struct{}, ch <-chan backends.TermSize, resize func(backends.TermSize) error) {
	for {
		select {
		case <-done:
			return
		case s, ok := <-ch:
			if !ok {
				return
			}
			_ = resize(s)
		}
	}
}

// Track sizes an exec's or an attachment's terminal: to size first, if
// given, then as changes come, until the returned stop is called.
func Track(ctx context.Context, resize func(backends.TermSize) error, size *backends.TermSize, changes <-chan backends.TermSize) (stop func()) {
	if size != nil {
		set(ctx, resize, *size)
	}
	done := make(chan struct{})
	if changes != nil {
		go Follow(done, changes, resize)
	}
	return func() { close(done) }
}
