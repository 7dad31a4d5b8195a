package muxconn

import (
	"context"
	"io"
	"net"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// maxBatch bounds one write (a WebSocket message) and what a writer may
// queue.
const maxBatch = 1 << 20

// Conn is an upgraded connection whose writes a background sender
// batches: yamux's writer goes on framing the next frames while one batch
// is written (measured: a relayed bulk stream a fifth faster than writing
// in yamux's goroutine).
type Conn struct {
	io.Reader
	send   func([]byte) error // one batch
	close  func() error
	framed bool // WebSocket messages, not the bare stream

	mu      sync.Mutex
	cond    *sync.Cond
	pending []byte
	err     error
	closed  bool
	sent    chan struct{} // closed when the sender is done
}

// WebSocket carries the stream in WebSocket binary messages on ws; ctx
// bounds the connection's life.
func WebSocket(ctx context.Context, ws *websocket.Conn) *Conn {
	ws.SetReadLimit(-1) // yamux frames carry their own bounds
	nc := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	c := newConn(nc, func(b []byte) error { return ws.Write(ctx, websocket.MessageBinary, b) }, nc.Close)
	c.framed = true
	return c
}

// Raw carries the stream as it is on an upgraded connection: reads from
// r (which holds what the upgrade's reader buffered), writes to w.
func Raw(r io.Reader, w io.Writer, closer io.Closer) *Conn {
	return newConn(r, func(b []byte) error { _, err := w.Write(b); return err }, closer.Close)
}

func newConn(r io.Reader, send func([]byte) error, closeFn func() error) *Conn {
	c := &Conn{Reader: r, send: send, close: closeFn, sent: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	go c.sendLoop()
	return c
}

// Framed reports whether the stream travels in WebSocket messages.
func (c *Conn) Framed() bool { return c.framed }

// Write queues p; it blocks while a full batch waits to be sent.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) >= maxBatch && c.err == nil && !c.closed {
		c.cond.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.closed {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	c.cond.Broadcast()
	return len(p), nil
}

func (c *Conn) sendLoop() {
	defer close(c.sent)
	var batch []byte
	for {
		c.mu.Lock()
		for len(c.pending) == 0 && !c.closed {
			c.cond.Wait()
		}
		if len(c.pending) == 0 && c.closed {
			c.mu.Unlock()
			return
		}
		batch, c.pending = c.pending, batch[:0]
		c.cond.Broadcast()
		c.mu.Unlock()
		if err := c.send(batch); err != nil {
			c.mu.Lock()
			c.err = err
			c.cond.Broadcast()
			c.mu.Unlock()
			return
		}
	}
}

// Close sends what is queued (within closeGrace), then closes the
// connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	select {
	case <-c.sent:
	case <-time.After(closeGrace):
	}
	return c.close()
}

// closeGrace bounds how long Close waits for queued writes.
const closeGrace = 2 * time.Second
