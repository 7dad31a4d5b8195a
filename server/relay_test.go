package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// TestRelayRechecks walks a workload's egress through the real relay: a
// caretaker (its token, its claim) → the server (decides again) → the
// client holding the session (decides again, then dials). A caretaker
// that lies about the route gets the server's decision, not its own; a
// server that relays what the client's policy does not send to the client
// is refused by the client.
func TestRelayRechecks(t *testing.T) {
	ts := newTestServer(t)
	ts.srv.cfg.AdvertiseURL = ts.http.URL // what the companions would dial
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "client-side target") }))
	defer target.Close()

	pol := &spec.Egress{Mode: spec.EgressEnv, Default: egress.Cluster, Rules: []spec.EgressRule{
		{Pattern: "*.corp.test", Route: egress.Client},
		{Pattern: "blocked.test", Route: egress.Deny},
		{Pattern: "gw.test", Route: egress.Gateway},
		{Pattern: "drift.test", Route: egress.Client},
	}}
	p := sleeperProject(uniqueProject("relay"))
	app := p.Services["app"]
	app.Egress = pol
	p.Services["app"] = app

	// The client: a session with the egress handler. Its copy of the
	// policy differs in one rule (drift.test: deny), as a server that
	// relays what the client never agreed to would meet.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := client.New(ts.http.URL, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := cl.OpenSession(ctx, p.Name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	clientPol := *pol
	clientPol.Rules = append([]spec.EgressRule{{Pattern: "drift.test", Route: egress.Deny}}, pol.Rules...)
	compiled, err := egress.Compile(&clientPol, "test", egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var dialed []string
	sess.Handle(api.OpEgress, client.EgressHandlerDialing(map[string]*egress.Policy{"app": compiled},
		func(ctx context.Context, hostport string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, hostport)
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", strings.TrimPrefix(target.URL, "http://"))
		}))
	ts.mustUpWithSession(p, ts.alice, sess.ID)
	tok := ts.caretakerToken(p.Name)

	// The caretaker's side of the relay.
	ct, err := client.New(ts.http.URL, tok)
	if err != nil {
		t.Fatal(err)
	}
	relay, err := ct.OpenRelay(ctx, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	// Each case opens as a proxy's CONNECT does (the answer awaited) and
	// as a redirected connection does (early, its request sent behind
	// the header): a refusal reads the same.
	open := func(dest, claim string, early bool) (string, error) {
		h := api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{Service: "app", Dest: dest, Route: claim}}
		openStream := relay.Open
		if early {
			openStream = relay.OpenEarly
		}
		c, err := openStream(ctx, h)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_, werr := fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: x\r\n\r\n")
		b, err := io.ReadAll(c)
		if err == nil {
			err = werr
		}
		return string(b), err
	}
	for _, early := range []bool{false, true} {
		for _, tc := range []struct {
			dest, claim string
			reach       bool
			kind        func(error) bool
			says        string
		}{
			{"git.corp.test:443", egress.Client, true, nil, ""},
			// Lies: the server decides, and acts on its own decision.
			{"blocked.test:443", egress.Client, false, errdefs.IsPermissionDenied, "denied (rules[1] blocked.test)"},
			{"example.org:443", egress.Client, false, errdefs.IsFailedPrecondition, "route cluster"},
			{"gw.test:443", egress.Client, false, errdefs.IsPermissionDenied, "no gateway"},
			// The server says client; the client's own policy says deny.
			{"drift.test:443", egress.Client, false, errdefs.IsPermissionDenied, "this client's policy says deny"},
		} {
			out, err := open(tc.dest, tc.claim, early)
			if tc.reach {
				if err != nil || !strings.Contains(out, "client-side target") {
					t.Fatalf("%s (early %v): %q, %v", tc.dest, early, out, err)
				}
				continue
			}
			if err == nil || !tc.kind(err) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%s claimed %s (early %v): want a refusal saying %q, got %q, %v", tc.dest, tc.claim, early, tc.says, out, err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) != 2 || dialed[0] != "git.corp.test:443" || dialed[1] != dialed[0] {
		t.Fatalf("the client dialed %v, want only git.corp.test:443, once per way of opening", dialed)
	}
	// A caretaker token is good for its own deployment's relay only.
	if _, err := ct.OpenRelay(ctx, p.Name+"x"); err == nil || !errdefs.IsPermissionDenied(err) {
		t.Fatalf("relay of another deployment: %v", err)
	}
}

// mustUpWithSession deploys p under a deploy-attach session, or fails,
// and takes it down at the end.
func (ts *testServer) mustUpWithSession(p spec.Project, token, session string) {
	ts.t.Helper()
	if code, body := ts.upWithSession(p, token, session); code != http.StatusOK || strings.Contains(body, `"error"`) {
		ts.t.Fatalf("up: %d %s", code, body)
	}
	ts.t.Cleanup(func() {
		zero := time.Duration(0)
		_ = ts.srv.e.Down(context.Background(), p.Name, engine.DownOptions{Volumes: true, Timeout: &zero})
	})
}

// upWithSession is an up of p under a deploy-attach session.
func (ts *testServer) upWithSession(p spec.Project, token, session string) (int, string) {
	ts.t.Helper()
	b, _ := json.Marshal(map[string]any{"spec": p})
	req, _ := http.NewRequest(http.MethodPost, ts.http.URL+"/v1/projects/"+p.Name+"/up", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(api.HeaderSession, session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(data)
}
