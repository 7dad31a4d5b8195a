package incus

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// droppingIncus answers an instance create with an operation it has
// already forgotten (as Incus does 5 s after one ends): its wait is 404.
// The instance exists when made is set.
func droppingIncus(t *testing.T, made bool) *Backend {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "incus.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	notFound := func(w http.ResponseWriter, what string) {
		writeJSON(w, http.StatusNotFound, map[string]any{"type": "error", "error": what + " not found", "error_code": 404})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /1.0/instances", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusAccepted, map[string]any{"type": "async", "operation": "/1.0/operations/op1",
			"metadata": operation{ID: "op1", Class: "task", Status: "Running"}})
	})
	mux.HandleFunc("GET /1.0/operations/{id}/wait", func(w http.ResponseWriter, r *http.Request) { notFound(w, "Operation") })
	mux.HandleFunc("GET /1.0/instances/{name}", func(w http.ResponseWriter, r *http.Request) {
		if !made {
			notFound(w, "Instance")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"type": "sync", "metadata": instance{Name: r.PathValue("name"), Status: "Stopped"}})
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return &Backend{cli: newClient(socket, "")}
}

// Locks down a flake of the incus lanes: a create whose wait came after
// incusd had dropped the finished operation ("Operation not found") is
// judged by the instance's state, not failed.
func TestCreateAfterOperationDropped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := droppingIncus(t, true).createInstance(ctx, "c1", map[string]string{"name": "c1"}); err != nil {
		t.Fatalf("create whose operation was dropped, the instance made: %v", err)
	}
	err := droppingIncus(t, false).createInstance(ctx, "c1", map[string]string{"name": "c1"})
	if err == nil || !errdefs.IsNotFound(err) {
		t.Fatalf("create whose operation was dropped, no instance: %v, want a NotFound error", err)
	}
}

// TestSecurityOpts: the options an Incus container cannot honor (podman's
// unmask=, which made /proc/sys writable there, a custom seccomp profile,
// anything unknown) are refused, not silently dropped (security round 2).
func TestSecurityOpts(t *testing.T) {
	for _, c := range []struct {
		opt  string
		nnp  bool
		fail func(error) bool
	}{
		{opt: "no-new-privileges", nnp: true},
		{opt: "no-new-privileges:true", nnp: true},
		{opt: "no-new-privileges=false"},
		{opt: "seccomp=unconfined"},
		{opt: "apparmor=unconfined"},
		{opt: "label=disable"},
		{opt: "no-new-privileges=maybe", fail: errdefs.IsInvalidArgument},
		{opt: "unmask=ALL", fail: errdefs.IsNotImplemented},
		{opt: "unmask=/proc/sys", fail: errdefs.IsNotImplemented},
		{opt: "mask=/proc/acpi", fail: errdefs.IsNotImplemented},
		{opt: "seccomp=/etc/profile.json", fail: errdefs.IsNotImplemented},
		{opt: "future-knob=on", fail: errdefs.IsInvalidArgument},
	} {
		var proc procConfig
		cs, err := backends.Resolve(backends.ResolveInput{App: spec.App{Name: "app", SecurityOpt: []string{c.opt}}})
		if err == nil {
			err = securityOpts(cs.Security, &proc)
		}
		switch {
		case c.fail == nil && err != nil:
			t.Errorf("%s: %v", c.opt, err)
		case c.fail != nil && !c.fail(err):
			t.Errorf("%s: wrong refusal: %v", c.opt, err)
		case proc.NoNewPrivs != c.nnp:
			t.Errorf("%s: no-new-privileges %v", c.opt, proc.NoNewPrivs)
		}
	}
}
