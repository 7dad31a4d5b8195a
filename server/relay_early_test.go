package server

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// egressRelay deploys a project whose service "app" has egress policy
// pol, under a client session serving its egress streams with handler,
// and returns the caretaker's relay connection for it.
func egressRelay(ctx context.Context, ts *testServer, pol *spec.Egress, handler client.Handler) *client.Session {
	ts.t.Helper()
	return egressRelayVia(ctx, ts, ts.http.URL, pol, handler)
}

// egressRelayVia is egressRelay with the client's session and the
// caretaker's relay reaching the server at url.
func egressRelayVia(ctx context.Context, ts *testServer, url string, pol *spec.Egress, handler client.Handler) *client.Session {
	ts.t.Helper()
	ts.srv.cfg.AdvertiseURL = ts.http.URL // what the companions would dial
	p := sleeperProject(uniqueProject("relay"))
	app := p.Services["app"]
	app.Egress = pol
	p.Services["app"] = app
	cl, err := client.New(url, ts.alice)
	if err != nil {
		ts.t.Fatal(err)
	}
	sess, err := cl.OpenSession(ctx, p.Name, false)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { sess.Close() })
	sess.Handle(api.OpEgress, handler)
	ts.mustUpWithSession(p, ts.alice, sess.ID)
	ct, err := client.New(url, ts.caretakerToken(p.Name))
	if err != nil {
		ts.t.Fatal(err)
	}
	relay, err := ct.OpenRelay(ctx, p.Name)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { relay.Close() })
	return relay
}

// TestRelayEarly opens relayed egress streams early: the caretaker's
// first bytes travel behind the header, the server passes them on to the
// client before anyone answered, and the client's answer passes back. The
// client here reads the bytes before it answers: a hop that held them
// until an answer would never deliver them, and the read would time out.
func TestRelayEarly(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pol := &spec.Egress{Mode: spec.EgressEnv, Default: egress.Client, Rules: []spec.EgressRule{{Pattern: "blocked.test", Route: egress.Deny}}}
	relay := egressRelay(ctx, ts, pol, func(h api.StreamHeader, st net.Conn) {
		defer st.Close()
		_ = st.SetReadDeadline(time.Now().Add(5 * time.Second))
		first := make([]byte, len("ping"))
		if _, err := io.ReadFull(st, first); err != nil {
			client.Reply(st, err) // what the caretaker then reads as the refusal
			return
		}
		_ = st.SetReadDeadline(time.Time{})
		if h.Egress.Dest == "refused.test:443" {
			client.Reply(st, errdefs.ErrPermissionDenied)
			return
		}
		client.Reply(st, nil)
		_, _ = io.WriteString(st, "pong:"+string(first))
	})
	open := func(dest string) (string, error) {
		c, err := relay.OpenEarly(ctx, api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{Service: "app", Dest: dest, Route: egress.Client}})
		if err != nil {
			return "", err
		}
		defer c.Close()
		_, werr := io.WriteString(c, "ping")
		b, err := io.ReadAll(c) // a refusal is the read's error
		if err == nil {
			err = werr
		}
		return string(b), err
	}
	if out, err := open("example.test:443"); err != nil || out != "pong:ping" {
		t.Fatalf("early stream: %q, %v; want pong:ping (the client read the first bytes before it answered)", out, err)
	}
	// The client's refusal passes through the server to the caretaker.
	if _, err := open("refused.test:443"); !errdefs.IsPermissionDenied(err) {
		t.Fatalf("refused by the client: %v, want permission denied", err)
	}
	// The server's own refusal answers the stream, the bytes dropped.
	if _, err := open("blocked.test:443"); err == nil || !strings.Contains(err.Error(), "denied (rules[0] blocked.test)") {
		t.Fatalf("refused by the server: %v", err)
	}
}

// TestDialEarly: a port-forwarded connection opened early carries its
// request with the header to a real workload and reads the page; one to
// a service that is not there reads the server's refusal as its error.
func TestDialEarly(t *testing.T) {
	ts := newTestServer(t)
	p := uniqueProject("early")
	ts.upAs(ts.alice, spec.Project{Name: p, Services: map[string]spec.App{"web": {
		Image: testImage, Command: []string{"sh", "-c", "mkdir -p /w && echo served > /w/index.html && exec httpd -f -p 8080 -h /w"},
	}}}.Normalize())
	sess, err := ts.clientOf(ts.alice).OpenSession(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := fetch(sess, true)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a page through an early stream: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // httpd starting
	}
	c, err := sess.DialEarly(context.Background(), api.Dial{Service: "nothere", Port: 80})
	if err != nil {
		t.Fatal(err) // an early open sends nothing yet: it cannot fail here
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, werr := io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	_, err = io.ReadAll(c)
	if !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), "nothere") {
		t.Fatalf("early dial of a service that is not there: read %v (write %v), want not found naming it", err, werr)
	}
}

// TestDialEarlyThroughCompanion: in remote mode a port-forwarded
// connection opened early reaches the replica's companion with its first
// bytes, the server passing the companion's answer through; the companion
// here reads them before it answers, which a hop holding them back until
// an answer would never let it do.
func TestDialEarlyThroughCompanion(t *testing.T) {
	ts := newTestServer(t)
	ts.srv.remoteDial = true // as a remote-mode backend makes it
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := sleeperProject(uniqueProject("early"))
	sess, err := ts.clientOf(ts.alice).OpenSession(ctx, p.Name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ts.mustUpWithSession(p, ts.alice, sess.ID)
	ct, err := client.New(ts.http.URL, ts.caretakerToken(p.Name))
	if err != nil {
		t.Fatal(err)
	}
	companion, err := ct.OpenRelayAs(ctx, p.Name, client.RelayOptions{Service: "app", Replica: 1, Handlers: map[string]client.Handler{
		api.OpDial: func(h api.StreamHeader, st net.Conn) {
			defer st.Close()
			_ = st.SetReadDeadline(time.Now().Add(5 * time.Second))
			first := make([]byte, len("ping"))
			if _, err := io.ReadFull(st, first); err != nil {
				client.Reply(st, err)
				return
			}
			client.Reply(st, nil)
			_, _ = io.WriteString(st, "pong:"+string(first))
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer companion.Close()
	var out string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := sess.DialEarly(ctx, api.Dial{Service: "app", Port: 80})
		if err != nil {
			t.Fatal(err)
		}
		_, werr := io.WriteString(c, "ping")
		b, err := io.ReadAll(c)
		c.Close()
		if out = string(b); err == nil && werr == nil {
			break
		}
		// Until the server has the companion's relay, it answers that
		// none is connected.
		if !errdefs.IsUnavailable(err) || time.Now().After(deadline) {
			t.Fatalf("early dial through the companion: %q, %v (write %v)", out, err, werr)
		}
	}
	if out != "pong:ping" {
		t.Fatalf("early dial through the companion read %q, want pong:ping (the companion read the first bytes before it answered)", out)
	}
}
