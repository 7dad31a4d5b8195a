package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

const testImage = "cornus-test/busybox:1"

// testServer is a server over the selected real backend, with two
// tenants (alice, bob) and its own data dir.
type testServer struct {
	t     testing.TB
	srv   *Server
	http  *httptest.Server
	b     backends.Backend
	alice string
	bob   string
	// operator is an operator token (tenant "ops").
	operator   string
	tokensFile string
	served     backends.Backend // what the server serves (b, or a wrapper of it)
	cfg        Config
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	return newTestServerWith(t)
}

// newTestServerWith is newTestServer with extra (NAME=VALUE, ahead of
// the environment: the first of a name wins) selecting the backend.
func newTestServerWith(t testing.TB, extra ...string) *testServer {
	t.Helper()
	return newTestServerOver(t, nil, extra...)
}

// newTestServerOver is newTestServerWith serving wrap(backend) (nil:
// the backend itself).
func newTestServerOver(t testing.TB, wrap func(backends.Backend) backends.Backend, extra ...string) *testServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	env := append(os.Environ(), "CORNUS_DATA_DIR="+filepath.Join(dir, "data"), "CORNUS_STATE_DIR="+filepath.Join(dir, "state"))
	env = append(slices.Clone(extra), env...)
	b, err := fromenv.Open(ctx, env)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a backend is required under CI: %v", err)
		}
		t.Skipf("no backend (start one with scripts/setup.sh): %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	loadTestImage(t, b)
	tokens := filepath.Join(dir, "tokens")
	ts := &testServer{t: t, b: b}
	if ts.alice, err = AddClientToken(tokens, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if ts.bob, err = AddClientToken(tokens, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if ts.operator, err = AddClientToken(tokens, "ops", RoleOperator); err != nil {
		t.Fatal(err)
	}
	ts.tokensFile = tokens
	served := b
	if wrap != nil {
		served = wrap(b)
	}
	ts.served, ts.cfg = served, Config{DataDir: filepath.Join(dir, "data"), TokensFile: tokens, Environ: env}
	ts.serve(ctx)
	return ts
}

// serve starts the server of ts.cfg on a test listener.
func (ts *testServer) serve(ctx context.Context) {
	t := ts.t
	t.Helper()
	srv, err := New(ctx, ts.served, ts.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts.srv = srv
	t.Cleanup(srv.Close)
	// The real server's limits, on a test listener.
	ts.http = httptest.NewUnstartedServer(nil)
	ts.http.Config = srv.httpServer(context.Background())
	ts.http.Start()
	t.Cleanup(ts.http.Close)
}

// restart stops the server (as a rollout does: its sessions' connections
// drop) and starts another on the same data, with extra environment.
func (ts *testServer) restart(extra ...string) {
	ts.t.Helper()
	ts.http.CloseClientConnections()
	ts.http.Close()
	ts.srv.Close()
	ts.cfg.Environ = append(slices.Clone(extra), ts.cfg.Environ...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts.serve(ctx)
}

func loadTestImage(t testing.TB, b backends.Backend) {
	t.Helper()
	imgs, err := backends.Want[backends.Images](b, backends.FeatureImages, "images")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imgs.InspectImage(context.Background(), testImage); err == nil {
		return
	}
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: testImage}); err != nil {
		t.Fatal(err)
	}
	if _, err := imgs.LoadImage(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
}

func uniqueProject(prefix string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// sleeperProject is one app that stops promptly.
func sleeperProject(name string) spec.Project {
	return spec.Project{Name: name, Services: map[string]spec.App{"app": {
		Image: testImage, Command: []string{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"},
	}}}.Normalize()
}

// request sends method path with token and body; it returns status and
// body.
func (ts *testServer) request(method, path, token string, body any) (int, string) {
	ts.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, ts.http.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(data)
}

// upAs deploys p for token and removes it when the test ends.
func (ts *testServer) upAs(token string, p spec.Project) {
	ts.t.Helper()
	code, body := ts.request(http.MethodPost, "/v1/projects/"+p.Name+"/up", token, map[string]any{"spec": p})
	if code != http.StatusOK || strings.Contains(body, `"error"`) {
		ts.t.Fatalf("up %s: %d %s", p.Name, code, body)
	}
	ts.t.Cleanup(func() {
		zero := time.Duration(0)
		_ = ts.srv.e.Down(context.Background(), p.Name, engine.DownOptions{Volumes: true, Timeout: &zero})
	})
}

func (ts *testServer) containers(project string) []backends.Container {
	ts.t.Helper()
	cs, err := ts.srv.e.PS(context.Background(), project, engine.PSOptions{All: true})
	if err != nil {
		ts.t.Fatal(err)
	}
	return cs
}

func engineAll() engine.PSOptions { return engine.PSOptions{All: true} }

// caretakerToken mints a caretaker token of project's live deployment
// (as an up does).
func (ts *testServer) caretakerToken(project string) string {
	ts.t.Helper()
	o, ok := ts.srv.owners.get(project)
	if !ok || o.Epoch == "" {
		ts.t.Fatalf("project %s has no live deployment", project)
	}
	tok, err := ts.srv.tokens.mintCaretaker(grant{Tenant: o.Tenant, Project: project, Epoch: o.Epoch})
	if err != nil {
		ts.t.Fatal(err)
	}
	return tok
}

// requestHeader is request, with the answer's headers.
func (ts *testServer) requestHeader(method, path, token string, body any) (int, string, http.Header) {
	ts.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, ts.http.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(data), resp.Header
}

// upHeader sends an up that is expected to fail and returns the
// caretaker token its answer carried ("" for none).
func (ts *testServer) upHeader(token string, p spec.Project) string {
	ts.t.Helper()
	_, body, hdr := ts.requestHeader(http.MethodPost, "/v1/projects/"+p.Name+"/up", token, map[string]any{"spec": p})
	if !strings.Contains(body, `"error"`) {
		ts.down(p.Name)
		ts.t.Fatalf("up %s succeeded: %s", p.Name, body)
	}
	return hdr.Get("X-Cornus-Caretaker-Token")
}

// downAs takes project down as token's tenant.
func (ts *testServer) downAs(token, project string) {
	ts.t.Helper()
	zero := 0
	if code, body := ts.request(http.MethodPost, "/v1/projects/"+project+"/down", token, map[string]any{"timeout": zero, "volumes": true}); code != http.StatusOK || strings.Contains(body, `"error"`) {
		ts.t.Fatalf("down %s: %d %s", project, code, body)
	}
}

// down removes project through the server's engine (cleanup).
func (ts *testServer) down(project string) {
	zero := time.Duration(0)
	_ = ts.srv.e.Down(context.Background(), project, engine.DownOptions{Volumes: true, Timeout: &zero})
}

func (ts *testServer) clientOf(token string) *client.Client {
	ts.t.Helper()
	c, err := client.New(ts.http.URL, token)
	if err != nil {
		ts.t.Fatal(err)
	}
	return c
}

func (ts *testServer) projectsOf(token string) *client.Projects {
	return &client.Projects{Client: ts.clientOf(token)}
}
