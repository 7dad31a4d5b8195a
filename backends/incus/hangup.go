package incus

import (
	"errors"
	"net"
	"sync/atomic"
	"syscall"
)

// hangupConn is an exec websocket's connection: once a write finds that
// Incus hung up (EPIPE, ECONNRESET), that write and every later one are
// dropped and reported done, so what Incus sent before hanging up is
// still read.
//
// Why: Incus pings each exec websocket as it connects (and every 10 s),
// then sends the output, a close, and hangs up. The websocket library
// (coder/websocket) answers a ping from inside Read; when the reader
// reaches the ping only after the hang-up, the pong's write fails, Read
// returns that error ("failed to handle control frame opPing: ...
// opPong: broken pipe") and the output behind the ping is lost: an exec
// printed nothing.
type hangupConn struct {
	net.Conn
	hungUp atomic.Bool
}

func (c *hangupConn) Write(p []byte) (int, error) {
	if c.hungUp.Load() {
		return len(p), nil
	}
	n, err := c.Conn.Write(p)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		c.hungUp.Store(true)
		return len(p), nil
	}
	return n, err
}
