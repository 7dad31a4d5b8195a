// Package wsconn turns a WebSocket into the byte stream a session's
// multiplexer runs over, coalescing small writes: yamux writes each
// frame's 12-byte header and its body separately, and one WebSocket
// message per write would double the messages and their overhead.
package wsconn

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// maxBatch bounds one WebSocket message (and what a writer may queue).
const maxBatch = 1 << 20

// Conn is a net.Conn over a WebSocket whose writes are batched by a
// background sender.
type Conn struct {
	net.Conn // reads, deadlines and addresses of websocket.NetConn
	ws       *websocket.Conn
	ctx      context.Context

	mu      sync.Mutex
	cond    *sync.Cond
	pending []byte
	err     error
	closed  bool
	sent    chan struct{} // closed when the sender is done
}

// New wraps ws; ctx bounds the connection's life.
func New(ctx context.Context, ws *websocket.Conn) *Conn {
	c := &Conn{Conn: websocket.NetConn(ctx, ws, websocket.MessageBinary), ws: ws, ctx: ctx, sent: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	go c.sendLoop()
	return c
}

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
		if err := c.ws.Write(c.ctx, websocket.MessageBinary, batch); err != nil {
			c.mu.Lock()
			c.err = err
			c.cond.Broadcast()
			c.mu.Unlock()
			return
		}
	}
}

// Close sends what is queued (within closeGrace), then closes the socket.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	select {
	case <-c.sent:
	case <-time.After(closeGrace):
	}
	return c.Conn.Close()
}

// closeGrace bounds how long Close waits for queued writes.
const closeGrace = 2 * time.Second
