package server

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// Security round 2: what one tenant (bob) can do to another (alice) and
// to the server, each attack as it was reproduced, on a real backend.

// refused asserts a request answered 401/403/400 or an error frame, and
// that its answer leaks no token.
func (ts *testServer) refused(method, path, token string, body any, wantCode int, wantText string) {
	ts.t.Helper()
	code, resp := ts.request(method, path, token, body)
	if code != wantCode || !strings.Contains(resp, wantText) {
		ts.t.Fatalf("%s %s: %d %s, want %d mentioning %q", method, path, code, resp, wantCode, wantText)
	}
	for _, secret := range []string{ts.alice, ts.bob, ts.operator} {
		if strings.Contains(resp, secret) {
			ts.t.Fatal("an answer contains a token")
		}
	}
}

// noContainers asserts a refused request left nothing of project: no
// container, network or volume.
func (ts *testServer) noContainers(project string) {
	ts.t.Helper()
	if cs := ts.containers(project); len(cs) != 0 {
		ts.t.Fatalf("project %s: a refused request created %d containers", project, len(cs))
	}
	ctx, labels := context.Background(), backends.ListOptions{Labels: map[string]string{backends.LabelProject: project}}
	vs, err := ts.b.ListVolumes(ctx, labels)
	if err != nil {
		ts.t.Fatal(err)
	}
	var ns []backends.Network
	if nb, ok := ts.b.(backends.Networks); ok {
		if ns, err = nb.ListNetworks(ctx, labels); err != nil {
			ts.t.Fatal(err)
		}
	}
	if len(vs)+len(ns) != 0 {
		ts.t.Fatalf("project %s: a refused request created %d networks and %d volumes", project, len(ns), len(vs))
	}
}

// Item 1: a secret or config naming a server path (the tokens file) or a
// server environment variable is refused before anything is made; the
// engine of a server reads neither even if asked.
func TestSpecCannotReadServerFiles(t *testing.T) {
	ts := newTestServer(t)
	t.Setenv("CORNUS_TEST_SERVER_SECRET", "server-env-value")
	for name, fm := range map[string]spec.FileMount{
		"file":        {Name: "tok", File: ts.tokensFile, Target: "/run/secrets/tok"},
		"environment": {Name: "env", Environment: "CORNUS_TEST_SERVER_SECRET", Target: "/run/secrets/env"},
	} {
		t.Run(name, func(t *testing.T) {
			p := sleeperProject(uniqueProject("steal"))
			a := p.Services["app"]
			a.Secrets = []spec.FileMount{fm}
			p.Services["app"] = a
			ts.refused(http.MethodPost, "/v1/projects/"+p.Name+"/up", ts.bob, map[string]any{"spec": p}, http.StatusBadRequest, "never reads its own")
			ts.noContainers(p.Name)
		})
	}
	// The engine behind the server refuses them too (defence in depth).
	p := sleeperProject(uniqueProject("steal"))
	a := p.Services["app"]
	a.Configs = []spec.FileMount{{Name: "tok", File: ts.tokensFile, Target: "/x"}}
	p.Services["app"] = a
	if _, err := ts.srv.e.Up(context.Background(), p, engine.UpOptions{}); err == nil || !strings.Contains(err.Error(), "reads no file") {
		t.Fatalf("the server's engine read a host file: %v", err)
	}
	ts.noContainers(p.Name)
}

// Item 1, the client half: content travels inline from the client, so a
// Compose secret with file: still works through a server.
func TestClientInlinesFiles(t *testing.T) {
	ts := newTestServer(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "s.txt")
	if err := os.WriteFile(secret, []byte("from-the-client\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := sleeperProject(uniqueProject("inline"))
	a := p.Services["app"]
	a.Secrets = []spec.FileMount{{Name: "s", File: secret, Target: "/run/secrets/s"}}
	p.Services["app"] = a
	projects := ts.projectsOf(ts.alice)
	if _, err := projects.Up(context.Background(), p, engine.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.down(p.Name) })
	if out := ts.exec(p.Name, "cat /run/secrets/s"); out != "from-the-client\n" {
		t.Fatalf("the secret in the container: %q", out)
	}
}

// Item 2: a caretaker token is minted only for the caller's own project
// and is bound to that deployment: a failed first up's token, and any
// token after a down or another tenant's deployment of the name, relays
// nothing.
func TestCaretakerTokenBoundToDeployment(t *testing.T) {
	ts := newTestServer(t)
	name := uniqueProject("ct")
	bad := sleeperProject(name)
	a := bad.Services["app"]
	a.Image = "cornus-test/none-such:1"
	a.PullPolicy = "never"
	bad.Services["app"] = a
	tok := ts.upHeader(ts.alice, bad)
	if tok == "" {
		t.Fatal("the up minted no caretaker token")
	}
	if _, ok := ts.srv.owners.get(name); ok {
		t.Fatal("a first up that made nothing still owns the name")
	}
	ts.relayRefused(tok)
	// bob now deploys the name: alice's old token does not reach it.
	ts.upAs(ts.bob, sleeperProject(name))
	ts.relayRefused(tok)
	// alice cannot take it, and gets no token for it.
	code, body, hdr := ts.requestHeader(http.MethodPost, "/v1/projects/"+name+"/up", ts.alice, map[string]any{"spec": sleeperProject(name)})
	if code != http.StatusForbidden || hdr.Get("X-Cornus-Caretaker-Token") != "" {
		t.Fatalf("alice's up of bob's project: %d %s (token %t)", code, body, hdr.Get("X-Cornus-Caretaker-Token") != "")
	}
	// bob's own token dies with bob's down.
	bobs := ts.caretakerToken(name)
	if code, _ := ts.request(http.MethodGet, "/v1/relay/"+name, bobs, nil); code == http.StatusUnauthorized || code == http.StatusForbidden {
		t.Fatalf("bob's live caretaker token refused: %d", code)
	}
	ts.downAs(ts.bob, name)
	ts.relayRefused(bobs)
}

// relayRefused asserts the relay refuses a caretaker token.
func (ts *testServer) relayRefused(tok string) {
	ts.t.Helper()
	// The path names the token's own project: refused for the grant.
	g, ok := func() (grant, bool) {
		ts.srv.tokens.mu.Lock()
		defer ts.srv.tokens.mu.Unlock()
		g, ok := ts.srv.tokens.caretaker[digestOf(tok)]
		return g, ok
	}()
	project := "none"
	if ok {
		project = g.Project
	}
	code, body := ts.request(http.MethodGet, "/v1/relay/"+project, tok, nil)
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		ts.t.Fatalf("the relay took a dead caretaker token: %d %s", code, body)
	}
}

// Item 3: a project nobody deployed through the server (the local CLI
// made it) is nobody's: no tenant can read, exec into, stop, remove or
// redeploy it, until an operator adopts it for one.
func TestUnownedProjectIsInvisible(t *testing.T) {
	ts := newTestServer(t)
	name := uniqueProject("local")
	local := engine.New(ts.b)
	if _, err := local.Up(context.Background(), sleeperProject(name), engine.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.down(name) })
	before := ts.containers(name)
	base := "/v1/projects/" + name
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, base + "/ps"}, {http.MethodGet, base + "/logs"}, {http.MethodGet, base + "/exec"},
		{http.MethodPost, base + "/stop"}, {http.MethodPost, base + "/rm"}, {http.MethodPost, base + "/down"},
		{http.MethodPost, base + "/up"}, {http.MethodGet, base + "/session"}, {http.MethodGet, "/v1/events?project=" + name},
	} {
		want := http.StatusForbidden
		if strings.HasPrefix(r.path, "/v1/events") {
			want = http.StatusNotFound
		}
		ts.refused(r.method, r.path, ts.bob, map[string]any{"spec": sleeperProject(name)}, want, "")
	}
	if after := ts.containers(name); len(after) != len(before) || !after[0].Running() {
		t.Fatalf("refused requests changed the local project: %v", after)
	}
	// A tenant cannot adopt; an operator can, for bob.
	ts.refused(http.MethodPost, base+"/adopt", ts.bob, map[string]any{"tenant": "bob"}, http.StatusForbidden, "operator")
	if code, body := ts.request(http.MethodPost, base+"/adopt", ts.operator, map[string]any{"tenant": "bob"}); code != http.StatusOK {
		t.Fatalf("operator adopt: %d %s", code, body)
	}
	if code, body := ts.request(http.MethodGet, base+"/ps", ts.bob, nil); code != http.StatusOK || !strings.Contains(body, before[0].ID) {
		t.Fatalf("bob's ps of the adopted project: %d %s", code, body)
	}
	ts.refused(http.MethodGet, base+"/ps", ts.alice, nil, http.StatusForbidden, "not yours")
}

// Item 4: bob cannot share alice's namespaces or mount her volumes or
// join her networks, by container name, by an external or explicit
// name, or by an undeclared volume name; his own are fine.
func TestTenantCannotJoinAnotherTenant(t *testing.T) {
	ts := newTestServer(t)
	victim := sleeperProject(uniqueProject("vic"))
	va := victim.Services["app"]
	va.Volumes = []spec.VolumeMount{{Source: "data", Target: "/data"}}
	va.Env = map[string]string{"SECRET": "alice-only"}
	victim.Services["app"] = va
	victim.Volumes = map[string]spec.Volume{"data": {}}
	ts.upAs(ts.alice, victim)
	victimC := ts.containers(victim.Name)[0].Name
	nsMode := func(set func(*spec.App)) func(*spec.App, *spec.Project) {
		return func(a *spec.App, p *spec.Project) { set(a); a.Networks, p.Networks = nil, nil }
	}
	attacks := []struct {
		name   string
		attack func(*spec.App, *spec.Project)
		code   int
		says   string
	}{
		{"network_mode container", nsMode(func(a *spec.App) { a.NetworkMode = "container:" + victimC }), http.StatusForbidden, "not in one of your projects"},
		{"pid container", func(a *spec.App, _ *spec.Project) { a.PidMode = "container:" + victimC }, http.StatusForbidden, "not in one of your projects"},
		{"ipc container", func(a *spec.App, _ *spec.Project) { a.IpcMode = "container:" + victimC }, http.StatusForbidden, "not in one of your projects"},
		{"network_mode bridge", nsMode(func(a *spec.App) { a.NetworkMode = "bridge" }), http.StatusForbidden, "joins its project's networks"},
		{"external volume", func(a *spec.App, p *spec.Project) {
			a.Volumes = []spec.VolumeMount{{Source: "v", Target: "/steal"}}
			p.Volumes = map[string]spec.Volume{"v": {Name: victim.Name + "_data", External: true}}
		}, http.StatusForbidden, "not one of your projects'"},
		{"named volume", func(a *spec.App, p *spec.Project) {
			a.Volumes = []spec.VolumeMount{{Source: "v", Target: "/steal"}}
			p.Volumes = map[string]spec.Volume{"v": {Name: victim.Name + "_data"}}
		}, http.StatusForbidden, "not one of your projects'"},
		{"undeclared volume", func(a *spec.App, _ *spec.Project) {
			a.Volumes = []spec.VolumeMount{{Source: victim.Name + "_data", Target: "/steal"}}
		}, http.StatusBadRequest, "is not declared"},
		{"label", func(a *spec.App, _ *spec.Project) {
			a.Labels = map[string]string{"com.docker.compose.project": victim.Name}
		}, http.StatusBadRequest, "cornus's own"},
	}
	for _, at := range attacks {
		t.Run(at.name, func(t *testing.T) {
			p := sleeperProject(uniqueProject("atk"))
			a := p.Services["app"]
			at.attack(&a, &p)
			p.Services["app"] = a
			ts.refused(http.MethodPost, "/v1/projects/"+p.Name+"/up", ts.bob, map[string]any{"spec": p.Normalize()}, at.code, at.says)
			ts.noContainers(p.Name)
		})
	}
	// bob may share his own project's container from another project.
	own := sleeperProject(uniqueProject("own"))
	ts.upAs(ts.bob, own)
	next := sleeperProject(uniqueProject("own2"))
	na := next.Services["app"]
	na.NetworkMode, na.Networks, next.Networks = "container:"+ts.containers(own.Name)[0].Name, nil, nil
	next.Services["app"] = na
	ts.upAs(ts.bob, next)
}

// Item 7: hooks come with stop, start, down: a privileged preStop sent
// with stop is refused by the policy and never runs.
func TestHooksMeetPolicyOnEveryVerb(t *testing.T) {
	ts := newTestServer(t)
	p := sleeperProject(uniqueProject("hook"))
	ts.upAs(ts.alice, p)
	evil := p
	evil.Services = map[string]spec.App{"app": p.Services["app"]}
	a := evil.Services["app"]
	a.Hooks = &spec.Hooks{PreStop: []spec.Hook{{Command: []string{"sh", "-c", "touch /tmp/hook-ran"}, Privileged: true}}}
	evil.Services["app"] = a
	for _, verb := range []string{"stop", "start", "restart", "kill", "rm", "down"} {
		// Refused by the engine, in the answer's error frame.
		code, body := ts.request(http.MethodPost, "/v1/projects/"+p.Name+"/"+verb, ts.alice, map[string]any{"spec": evil})
		if code != http.StatusOK || !strings.Contains(body, `"error"`) || !strings.Contains(body, "hooks.preStop[0].privileged") {
			t.Fatalf("%s with a privileged hook: %d %s", verb, code, body)
		}
	}
	if cs := ts.containers(p.Name); len(cs) != 1 || !cs[0].Running() {
		t.Fatalf("refused verbs changed the project: %v", cs)
	}
	if out := ts.exec(p.Name, "ls /tmp/hook-ran 2>&1; true"); !strings.Contains(out, "No such file") {
		t.Fatalf("the privileged hook ran: %q", out)
	}
	// The engine itself refuses it too (every front end goes through it).
	if err := ts.srv.e.Stop(context.Background(), p.Name, engine.LifecycleOptions{Spec: &evil}); err == nil || !strings.Contains(err.Error(), "privileged") {
		t.Fatalf("engine stop with a privileged hook: %v", err)
	}
}

// Item 13: a session is checked on every stream it opens, not only when
// it opened: bob's session on a free name reaches nothing once alice
// deploys that name, and is closed within a second.
func TestSessionRecheckedPerStream(t *testing.T) {
	ts := newTestServer(t)
	name := uniqueProject("sess")
	sess, err := ts.clientOf(ts.bob).OpenSession(context.Background(), name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ts.upAs(ts.alice, sleeperProject(name))
	select {
	case <-sess.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("bob's session on the name alice deployed is still open after 2 s")
	}
	if _, err := sess.Dial(context.Background(), api.Dial{Service: "app", Index: 1, Port: 80}); err == nil {
		t.Fatal("bob's session dialled alice's project")
	}
}

// Item 13: the scheme of an Authorization header is case-insensitive.
func TestBearerAnyCase(t *testing.T) {
	for _, h := range []string{"Bearer x123", "bearer x123", "BEARER x123", "  Bearer   x123 "} {
		if got := bearer(h); got != "x123" {
			t.Errorf("bearer(%q) = %q", h, got)
		}
	}
	for _, h := range []string{"Basic x123", "Bearerx123", ""} {
		if got := bearer(h); got != "" {
			t.Errorf("bearer(%q) = %q, want none", h, got)
		}
	}
	ts := newTestServer(t)
	req, _ := http.NewRequest(http.MethodGet, ts.http.URL+"/v1/info", nil)
	req.Header.Set("Authorization", "bearer "+ts.alice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("lowercase bearer: %d", resp.StatusCode)
	}
}

// exec runs a shell script in project's app through the server's engine.
func (ts *testServer) exec(project, script string) string {
	ts.t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ts.srv.e.Exec(ctx, project, engine.ExecOptions{Service: "app",
		ExecOptions: backends.ExecOptions{Cmd: []string{"sh", "-c", script}, Stdout: &out, Stderr: &out}}); err != nil {
		ts.t.Fatalf("exec %q: %v", script, err)
	}
	return out.String()
}

// Issue 22 item 9: egress that may route to the client is refused before
// anything is created when nothing could carry it: a server with no
// advertise URL, or a detached session.
func TestClientRoutesNeedARelay(t *testing.T) {
	ts := newTestServer(t)
	p := sleeperProject(uniqueProject("route"))
	a := p.Services["app"]
	a.Egress = &spec.Egress{Mode: spec.EgressEnv, Default: "cluster", Rules: []spec.EgressRule{{Pattern: "*.corp.test", Route: "client"}}}
	p.Services["app"] = a
	ts.refused(http.MethodPost, "/v1/projects/"+p.Name+"/up", ts.alice, map[string]any{"spec": p}, http.StatusPreconditionFailed, "no advertise URL")
	ts.noContainers(p.Name)
	ts.srv.cfg.AdvertiseURL = ts.http.URL
	sess, err := ts.clientOf(ts.alice).OpenSession(context.Background(), p.Name, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	code, body := ts.upWithSession(p, ts.alice, sess.ID)
	if code != http.StatusPreconditionFailed || !strings.Contains(body, "detached") {
		t.Fatalf("client routes on a detached session: %d %s", code, body)
	}
	ts.noContainers(p.Name)
}
