package monitor

import (
	"io"
	"sync"
)

// subscriberBuffer is how many output chunks an attached client may lag
// behind before it is cut off: the container never waits for a client.
const subscriberBuffer = 256

// chunk is one write of the main process's output.
type chunk struct {
	stream byte // 1 stdout, 2 stderr (Docker's stream ids)
	data   []byte
}

// hub fans the current run's output out to attached clients.
type hub struct {
	mu   sync.Mutex
	subs map[chan chunk]struct{}
}

func (h *hub) subscribe() chan chunk {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan chunk]struct{}{}
	}
	ch := make(chan chunk, subscriberBuffer)
	h.subs[ch] = struct{}{}
	return ch
}

func (h *hub) unsubscribe(ch chan chunk) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

func (h *hub) publish(stream byte, p []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	c := chunk{stream: stream, data: append([]byte(nil), p...)}
	for ch := range h.subs {
		select {
		case ch <- c:
		default: // too slow: cut off rather than block the container
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// closeAll ends every attachment (the run ended).
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}

// teeWriter publishes a stream's output to the hub, then logs it.
type teeWriter struct {
	hub    *hub
	stream byte
	w      io.Writer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.hub.publish(t.stream, p)
	return t.w.Write(p)
}
