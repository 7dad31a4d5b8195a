package dockerapi

import (
	"context"
	"sync"
)

// attachments counts each container's open attach streams, so that an
// auto-removed container (docker run --rm) is removed only once every
// stream has delivered its output, as dockerd does: some backends stream
// a container's output from its log, which they read after it exited
// (kubernetes follows the pod's log), and a removal first loses it.
type attachments struct {
	mu   sync.Mutex
	open map[string]int
	idle map[string]chan struct{} // closed when the count drops to 0
}

func newAttachments() *attachments {
	return &attachments{open: map[string]int{}, idle: map[string]chan struct{}{}}
}

// add counts one stream of id until done is called.
func (a *attachments) add(id string) (done func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.open[id] == 0 {
		a.idle[id] = make(chan struct{})
	}
	a.open[id]++
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.open[id]--; a.open[id] == 0 {
				close(a.idle[id])
				delete(a.open, id)
				delete(a.idle, id)
			}
		})
	}
}

// wait returns once id has no open stream, or ctx ends.
func (a *attachments) wait(ctx context.Context, id string) {
	a.mu.Lock()
	ch, ok := a.idle[id]
	a.mu.Unlock()
	if !ok {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
