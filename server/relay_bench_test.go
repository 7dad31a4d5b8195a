package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/internal/netdelay"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// BenchmarkEgress measures a workload's client-routed connection through
// the real relay (caretaker side → server → the client's session →
// target) against the same target dialed directly on loopback: bulk
// throughput (16 MiB per op, MB/s) and connection setup (open, one byte
// back). make bench prints both side by side.
func BenchmarkEgress(b *testing.B) {
	ts := newTestServer(b)
	const bulk = 16 << 20
	target := serveBytes(b, bulk)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	block := &spec.Egress{Mode: spec.EgressEnv, Default: egress.Client}
	pol, err := egress.Compile(block, "bench", egress.PACOptions{})
	if err != nil {
		b.Fatal(err)
	}
	handler := client.EgressHandlerDialing(map[string]*egress.Policy{"app": pol}, func(ctx context.Context, hostport string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", target)
	})
	relay := egressRelay(ctx, ts, block, handler)
	dialDirect := func() (net.Conn, error) { return net.Dial("tcp", target) }
	h := api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{Service: "app", Dest: "example.test:443", Route: egress.Client}}
	// relay is a connection the transparent redirect relays (opened
	// early: the first bytes behind the header); relay-answered one the
	// proxy's CONNECT relays (its answer awaited before any byte).
	dialRelay := func() (net.Conn, error) { return relay.OpenEarly(ctx, h) }
	dialAnswered := func() (net.Conn, error) { return relay.Open(ctx, h) }
	for _, path := range []struct {
		name string
		dial func() (net.Conn, error)
	}{{"direct", dialDirect}, {"relay", dialRelay}, {"relay-answered", dialAnswered}} {
		b.Run("bulk/"+path.name, func(b *testing.B) {
			b.SetBytes(bulk)
			for b.Loop() {
				c, err := path.dial()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Write([]byte{'b'}); err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, c)
				c.Close()
				if n != bulk {
					b.Fatalf("read %d bytes, want %d", n, bulk)
				}
			}
		})
		b.Run("setup/"+path.name, func(b *testing.B) { benchSetup(b, path.dial) })
	}
	// Behind an added round trip on both links (caretaker–server and
	// server–client; internal/netdelay): early is one round trip over the
	// two, answered two.
	for _, oneWay := range []time.Duration{500 * time.Microsecond, 10 * time.Millisecond} {
		addr, stop, err := netdelay.Relay(strings.TrimPrefix(ts.http.URL, "http://"), oneWay)
		if err != nil {
			b.Fatal(err)
		}
		far := egressRelayVia(ctx, ts, "http://"+addr, block, handler)
		rtt := fmt.Sprintf("setup-rtt%v/", 2*oneWay)
		b.Run(rtt+"relay", func(b *testing.B) { benchSetup(b, func() (net.Conn, error) { return far.OpenEarly(ctx, h) }) })
		b.Run(rtt+"relay-answered", func(b *testing.B) { benchSetup(b, func() (net.Conn, error) { return far.Open(ctx, h) }) })
		far.Close()
		stop()
	}
}

// benchSetup measures opening a connection with dial, one byte out and
// one back.
func benchSetup(b *testing.B, dial func() (net.Conn, error)) {
	one := make([]byte, 1)
	for b.Loop() {
		c, err := dial()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write([]byte{'s'}); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, one); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// serveBytes listens on loopback: after one byte in, it sends n bytes for
// 'b', one byte for anything else, then closes.
func serveBytes(tb testing.TB, n int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	chunk := make([]byte, 256<<10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(time.Minute))
				cmd := make([]byte, 1)
				if _, err := io.ReadFull(c, cmd); err != nil {
					return
				}
				if cmd[0] != 'b' {
					_, _ = c.Write(cmd) // a failure shows as the client's short read
					return
				}
				for left := n; left > 0; left -= len(chunk) {
					if _, err := c.Write(chunk[:min(left, len(chunk))]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// settle releases project's session and waits until the server forgot it
// (its state file written), so the test's directories can go.
func (ts *testServer) settle(id, project string) {
	ts.srv.sessions.release(project)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ts.srv.sessions.mu.Lock()
		_, live := ts.srv.sessions.byID[id]
		ts.srv.sessions.mu.Unlock()
		if !live {
			return
		}
	}
}

// session is the server's side of the session id, once it registered it.
func (ts *testServer) session(id string) *session {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ts.srv.sessions.mu.Lock()
		s := ts.srv.sessions.byID[id]
		ts.srv.sessions.mu.Unlock()
		if s != nil {
			return s
		}
	}
	ts.t.Fatalf("session %s never registered", id)
	return nil
}
