package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// Issue 30: a caretaker's credential request crosses the server only for
// a credential its own deployment declared for that service; the client
// mints only what its own copy declares; another tenant's caretaker gets
// nothing of it; and the server keeps nothing but the names.
func TestCredentialRelay(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const secret = "s3cret-minted-on-the-client"

	// serve holds tenant token's session for p, whose client declares the
	// credentials of declared (service → name) with an env source.
	var minted atomic.Int32
	serve := func(p spec.Project, token string, declared map[string][]string) {
		cl, err := client.New(ts.http.URL, token)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := cl.OpenSession(ctx, p.Name, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		creds := map[string]map[string]spec.CredentialSource{}
		for svc, names := range declared {
			creds[svc] = map[string]spec.CredentialSource{}
			for _, n := range names {
				creds[svc][n] = spec.CredentialSource{Env: "CRED"}
			}
		}
		h := client.CredentialHandler(creds, []string{"CRED=" + secret})
		sess.Handle(api.OpCredential, func(hd api.StreamHeader, st net.Conn) {
			minted.Add(1)
			h(hd, st)
		})
		ts.mustUpWithSession(p, token, sess.ID)
	}
	alice := sleeperProject(uniqueProject("creda"))
	serve(alice, ts.alice, map[string][]string{"app": {"tok", "client-only"}})
	// The deployment's declarations as the server records them at up (a
	// server in remote mode; this one deploys without companions).
	withCreds := alice
	withCreds.Services = map[string]spec.App{"app": {Name: "app", Credentials: []spec.Credential{{Name: "tok"}, {Name: "server-only"}}}}
	if err := ts.srv.credentials.set(withCreds); err != nil {
		t.Fatal(err)
	}
	bob := sleeperProject(uniqueProject("credb"))
	serve(bob, ts.bob, map[string][]string{"app": {"tok"}})

	ask := func(project, service, name string) (string, error) {
		ct, err := client.New(ts.http.URL, ts.caretakerToken(project))
		if err != nil {
			t.Fatal(err)
		}
		relay, err := ct.OpenRelay(ctx, project)
		if err != nil {
			t.Fatal(err)
		}
		defer relay.Close()
		st, err := relay.Open(ctx, api.StreamHeader{Op: api.OpCredential, Credential: &api.CredentialOpen{Service: service, Name: name}})
		if err != nil {
			return "", err
		}
		defer st.Close()
		v, err := client.ReadCredential(st)
		return string(v.Value), err
	}
	if got, err := ask(alice.Name, "app", "tok"); err != nil || got != secret {
		t.Fatalf("a declared credential: %q, %v", got, err)
	}
	before := minted.Load()
	for _, c := range []struct {
		project, service, name string
		kind                   func(error) bool
		says                   string
	}{
		{alice.Name, "app", "client-only", errdefs.IsPermissionDenied, `declares no credential "client-only"`},
		{alice.Name, "db", "tok", errdefs.IsPermissionDenied, "service db"},
		{alice.Name, "app", "../tok", errdefs.IsPermissionDenied, "declares no credential"},
		// Bob's deployment never declared it with the server: his client's
		// copy does not count, and alice's declaration is not his.
		{bob.Name, "app", "tok", errdefs.IsPermissionDenied, "declares no credential"},
	} {
		if got, err := ask(c.project, c.service, c.name); err == nil || !c.kind(err) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s/%s asks %q: %q, %v; want a refusal saying %q", c.project, c.service, c.name, got, err, c.says)
		}
	}
	if n := minted.Load(); n != before {
		t.Errorf("the clients were asked %d times for credentials the server refuses", n-before)
	}
	// A server that relays what the client's own copy does not declare is
	// refused by the client.
	if got, err := ask(alice.Name, "app", "server-only"); err == nil || !errdefs.IsPermissionDenied(err) || !strings.Contains(err.Error(), "this client's project declares no such credential") {
		t.Errorf("a name only the server declares: %q, %v", got, err)
	}
	// The server keeps the names, never a value.
	_ = filepath.WalkDir(filepath.Dir(ts.srv.credentials.dir), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
				t.Errorf("the credential is in the server's file %s", path)
			}
		}
		return nil
	})
	ts.srv.credentials.forget(alice.Name)
	if _, err := ask(alice.Name, "app", "tok"); err == nil || !errdefs.IsPermissionDenied(err) {
		t.Errorf("after the deployment's declarations are gone: %v", err)
	}
}

// Credentials need remote mode's companions and a session: refused,
// naming what to set, before anything is created.
func TestCredentialsRefusedWithoutRemoteMode(t *testing.T) {
	ts := newTestServer(t)
	p := sleeperProject(uniqueProject("credr"))
	app := p.Services["app"]
	app.Credentials = []spec.Credential{{Name: "tok"}}
	p.Services["app"] = app
	code, body := ts.upWithSession(p, ts.alice, "")
	if code == 200 && !strings.Contains(body, "remote mode") {
		t.Fatalf("up with credentials on a server without remote mode: %d %s", code, body)
	}
	if !strings.Contains(body, "services app ask for credentials") {
		t.Errorf("the refusal: %d %s", code, body)
	}
	sel := backends.ListOptions{Labels: map[string]string{backends.ComposeProject: p.Name}, All: true}
	if c, err := ts.srv.b.List(context.Background(), sel); err != nil || len(c) != 0 {
		t.Errorf("%d containers made (%v)", len(c), err)
	}
}

// An up in progress adds its declarations to those of the replicas it
// replaces; its success leaves only its own; a restarted server reads them
// back.
func TestCredentialGrantsDuringUp(t *testing.T) {
	dir := t.TempDir()
	g := newServiceGrants(dir, declaredCredentials)
	with := func(names ...string) spec.Project {
		a := spec.App{Name: "app"}
		for _, n := range names {
			a.Credentials = append(a.Credentials, spec.Credential{Name: n})
		}
		return spec.Project{Name: "p", Services: map[string]spec.App{"app": a}}
	}
	if err := g.set(with("old")); err != nil {
		t.Fatal(err)
	}
	if err := g.add(with("new")); err != nil {
		t.Fatal(err)
	}
	if !g.allowed("p", "app", "old") || !g.allowed("p", "app", "new") {
		t.Error("during the up: the running replicas' credential or the new one refused")
	}
	if err := g.set(with("new")); err != nil {
		t.Fatal(err)
	}
	if g.allowed("p", "app", "old") || !g.allowed("p", "app", "new") {
		t.Error("after the up: the replaced declaration kept, or the new one lost")
	}
	if again := newServiceGrants(dir, declaredCredentials); !again.allowed("p", "app", "new") || again.allowed("p", "app", "old") || again.allowed("p", "db", "new") {
		t.Error("a restarted server reads other declarations back")
	}
}
