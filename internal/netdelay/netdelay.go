// Package netdelay adds a fixed delay to TCP connections on loopback, for
// benchmarks of latency-bound paths: this kernel has no netem
// (CONFIG_NET_SCH_NETEM is not set), so a relay in user space holds every
// chunk it reads for a fixed time before writing it on, in each
// direction, bandwidth kept.
package netdelay

import (
	"net"
	"sync"
	"time"
)

// Relay relays connections on a loopback port to target, each direction
// delayed by oneWay (a round trip of 2×oneWay). stop closes the listener
// and every relayed connection.
func Relay(target string, oneWay time.Duration) (addr string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, t)
			mu.Unlock()
			go delayCopy(t, c, oneWay)
			go delayCopy(c, t, oneWay)
		}
	}()
	return l.Addr().String(), func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}, nil
}

// chunk is what one read got, and when it may be written on.
type chunk struct {
	due time.Time
	b   []byte
}

// delayCopy copies src to dst, each chunk oneWay after it was read.
func delayCopy(dst, src net.Conn, oneWay time.Duration) {
	q := make(chan chunk, 1<<14)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 64<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{time.Now().Add(oneWay), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	for range q { // drain: the reader is not left blocked
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite() //nolint:errcheck // the peer sees the end either way
	}
}
