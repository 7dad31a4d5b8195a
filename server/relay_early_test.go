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
	ts.srv.cfg.AdvertiseURL = ts.http.URL // what the companions would dial
	p := sleeperProject(uniqueProject("relay"))
	app := p.Services["app"]
	app.Egress = pol
	p.Services["app"] = app
	cl, err := client.New(ts.http.URL, ts.alice)
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
	ct, err := client.New(ts.http.URL, ts.caretakerToken(p.Name))
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
