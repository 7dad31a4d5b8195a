package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/engine"
)

// Issue 31: the tokens file holds digests, never tokens; a token is
// shown once.
func TestTokensFileHoldsDigests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	tok, err := AddClientToken(path, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	op, err := AddClientToken(path, "ops", RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{tok, op, strings.TrimPrefix(tok, TokenPrefix)} {
		if bytes.Contains(data, []byte(secret)) {
			t.Fatalf("the tokens file holds a token:\n%s", data)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("tokens file mode %v", st.Mode().Perm())
	}
	if _, err := AddClientToken(path, "alice", ""); err == nil {
		t.Error("a second token named alice was added")
	}
	tk, err := newTokens(path, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := tk.authenticate(tok); !ok || id.tenant != "alice" || id.role != "" {
		t.Errorf("alice's token: %+v %t", id, ok)
	}
	if id, ok := tk.authenticate(op); !ok || id.role != RoleOperator {
		t.Errorf("the operator's token: %+v %t", id, ok)
	}
	if !strings.HasPrefix(tok, TokenPrefix) || len(tok) != len(TokenPrefix)+43 {
		t.Errorf("token %q lacks the scannable prefix or its length", tok)
	}
	es, err := ListClientTokens(path)
	if err != nil || len(es) != 2 || es[0].Name != "alice" || es[1].Role != RoleOperator || es[0].Created.IsZero() {
		t.Fatalf("list: %+v %v", es, err)
	}
}

// Issue 31: a file of plain NAME:TOKEN lines keeps working and is
// rewritten as digests, with a log line saying so.
func TestPlainTokensMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	plain := NewToken()
	if err := os.WriteFile(path, []byte("# old\nalice:"+plain+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	tk, err := newTokens(path, t.TempDir(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := tk.authenticate(plain); !ok || id.tenant != "alice" {
		t.Fatalf("the plain token no longer works: %+v %t", id, ok)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte(plain)) || !bytes.Contains(data, []byte("alice:sha256:")) {
		t.Fatalf("not rewritten as digests:\n%s", data)
	}
	if !strings.Contains(logs.String(), "rewritten as SHA-256 digests") {
		t.Errorf("no log line about the migration: %s", logs.String())
	}
	if id, ok := tk.authenticate(plain); !ok || id.tenant != "alice" {
		t.Fatalf("the token after the rewrite: %+v %t", id, ok)
	}
}

// Issue 31: revoking a tenant ends its streaming requests, its
// sessions and its deployments' caretaker relays within a second (the
// watcher looks every revokeTick; the test allows 5 s on a loaded
// machine and reports the time).
func TestRevokeEndsOpenStreams(t *testing.T) {
	ts := newTestServer(t)
	p := sleeperProject(uniqueProject("rev"))
	ctx := context.Background()
	sess, err := ts.clientOf(ts.bob).OpenSession(ctx, p.Name, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	projects := ts.projectsOf(ts.bob)
	projects.Session = sess.ID
	if _, err := projects.Up(ctx, p, engine.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.down(p.Name) })
	// A streaming request: logs -f.
	req, _ := http.NewRequest(http.MethodGet, ts.http.URL+"/v1/projects/"+p.Name+"/logs?follow=1", nil)
	req.Header.Set("Authorization", "Bearer "+ts.bob)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	logsDone := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, resp.Body); close(logsDone) }()
	// A caretaker relay of bob's deployment.
	relay, err := ts.clientOf(ts.caretakerToken(p.Name)).OpenRelay(ctx, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()

	start := time.Now()
	if err := RevokeClientToken(ts.tokensFile, "bob"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		what string
		done <-chan struct{}
	}{{"logs -f", logsDone}, {"session", sess.Done()}, {"relay", relay.Done()}} {
		select {
		case <-w.done:
		case <-time.After(time.Until(start.Add(5 * time.Second))):
			t.Fatalf("%s still open 5 s after the revocation", w.what)
		}
	}
	t.Logf("the revocation closed logs -f, the session and the relay in %v", time.Since(start).Round(time.Millisecond))
	if code, _ := ts.request(http.MethodGet, "/v1/info", ts.bob, nil); code != http.StatusUnauthorized {
		t.Errorf("bob's revoked token: %d", code)
	}
	if code, _ := ts.request(http.MethodGet, "/v1/info", ts.alice, nil); code != http.StatusOK {
		t.Errorf("alice's token after bob's revocation: %d", code)
	}
}
