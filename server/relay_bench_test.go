package server

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/egress"
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
	ts.srv.cfg.AdvertiseURL = ts.http.URL // what the companions would dial
	const bulk = 16 << 20
	target := serveBytes(b, bulk)
	p := sleeperProject(uniqueProject("egb"))
	app := p.Services["app"]
	app.Egress = &spec.Egress{Mode: spec.EgressEnv, Default: egress.Client}
	p.Services["app"] = app
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl, _ := client.New(ts.http.URL, ts.alice)
	sess, err := cl.OpenSession(ctx, p.Name, false)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	pol, _ := egress.Compile(app.Egress, "bench", egress.PACOptions{})
	sess.Handle(api.OpEgress, client.EgressHandlerDialing(map[string]*egress.Policy{"app": pol},
		func(ctx context.Context, hostport string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", target)
		}))
	// The deployment, made under the session as an up makes it.
	ts.mustUpWithSession(p, ts.alice, sess.ID)
	tok := ts.caretakerToken(p.Name)
	ct, _ := client.New(ts.http.URL, tok)
	relay, err := ct.OpenRelay(ctx, p.Name)
	if err != nil {
		b.Fatal(err)
	}
	defer relay.Close()
	dialDirect := func() (net.Conn, error) { return net.Dial("tcp", target) }
	dialRelay := func() (net.Conn, error) {
		return relay.Open(ctx, api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{Service: "app", Dest: "example.test:443", Route: egress.Client}})
	}
	for _, path := range []struct {
		name string
		dial func() (net.Conn, error)
	}{{"direct", dialDirect}, {"relay", dialRelay}} {
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
		b.Run("setup/"+path.name, func(b *testing.B) {
			one := make([]byte, 1)
			for b.Loop() {
				c, err := path.dial()
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
		})
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
