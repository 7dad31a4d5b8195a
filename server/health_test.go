package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// brokenList is a backend whose List fails once broken, as a cluster's
// API does when the service account may no longer list pods.
type brokenList struct {
	backends.Backend
	broken *atomic.Bool
}

func (b brokenList) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	if b.broken.Load() {
		return nil, errors.New(`pods is forbidden: User "system:serviceaccount:cornus:cornus" cannot list resource "pods"`)
	}
	return b.Backend.List(ctx, o)
}

// Issue 28: the probes a Deployment uses answer without a token; readiness
// follows the backend and names what fails.
func TestHealthProbes(t *testing.T) {
	get := func(ts *testServer, path string) (int, string) {
		t.Helper()
		resp, err := http.Get(ts.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	ts := newTestServer(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(ts, p); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
			t.Errorf("%s: %d %q", p, code, body)
		}
	}
	if code, _ := get(ts, "/v1/info"); code != http.StatusUnauthorized {
		t.Errorf("/v1/info without a token: %d, want 401 (the probes are the only open routes)", code)
	}
	var fail atomic.Bool
	broken := newTestServerOver(t, func(b backends.Backend) backends.Backend { return brokenList{b, &fail} })
	fail.Store(true)
	if code, _ := get(broken, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with a failing backend: %d, want 200", code)
	}
	if code, body := get(broken, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot list resource \"pods\"") {
		t.Errorf("/readyz with a failing backend: %d %q, want 503 naming the refusal", code, body)
	}
}

// The log says when readiness was lost, why (each new cause once), and
// how long the outage lasted: the request log shows only the status.
func TestReadinessLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var r readiness
	refused := errors.New("dial tcp 10.96.0.1:443: connect: connection refused")
	r.record(log, "kubernetes", nil)
	r.record(log, "kubernetes", refused)
	r.record(log, "kubernetes", refused)
	r.record(log, "kubernetes", context.DeadlineExceeded)
	r.record(log, "kubernetes", nil)
	r.record(log, "kubernetes", nil)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{`msg="not ready" backend=kubernetes err="dial tcp`, `msg="not ready" backend=kubernetes err="context deadline exceeded"`, `msg="ready again" backend=kubernetes after=`}
	if len(lines) != len(want) {
		t.Fatalf("log:\n%s\nwant %d lines", buf.String(), len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %s, want %s", i, lines[i], w)
		}
	}
}
