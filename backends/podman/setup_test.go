package podman

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/spec"
)

// testRef is the busybox image the daemon tests run (built and loaded
// here, never pulled).
const testRef = backendtest.Image

// setup connects to the real service and makes sure the test image is in.
func setup(t *testing.T) (*Backend, context.Context) {
	t.Helper()
	b := newTestBackend(t)
	ctx := testContext(t)
	if _, err := b.InspectImage(ctx, testRef); err != nil {
		var buf bytes.Buffer
		if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: testRef, UDPSink: true}); err != nil {
			t.Fatalf("build image: %v", err)
		}
		if _, err := b.LoadImage(ctx, &buf); err != nil {
			t.Fatalf("load image: %v", err)
		}
	}
	return b, ctx
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// unique returns a name unique to this test run.
func unique(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "cornus-t-" + prefix + "-" + hex.EncodeToString(b[:])
}

// createApp creates a container from an app and removes it (with its
// anonymous volumes) when the test ends, pass or fail.
func createApp(t *testing.T, b *Backend, project string, app spec.App, mod ...func(*backends.ResolveInput)) backends.Container {
	t.Helper()
	if app.Image == "" {
		app.Image = testRef
	}
	name := unique(app.Name)
	in := backends.ResolveInput{
		Project: project, App: app, Replica: 1, Name: name,
		Labels: map[string]string{backends.LabelProject: project, backends.LabelApp: app.Name, backends.LabelReplica: "1"},
	}
	for _, m := range mod {
		m(&in)
	}
	cs, err := backends.Resolve(in)
	if err != nil {
		t.Fatalf("resolve %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Remove(ctx, name, backends.RemoveOptions{Force: true, Volumes: true}); err != nil && !errdefs.IsNotFound(err) {
			t.Errorf("cleanup container %s: %v", name, err)
		}
	})
	c, err := b.Create(testContext(t), cs)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return c
}

// started creates and starts an app.
func started(t *testing.T, b *Backend, project string, app spec.App, mod ...func(*backends.ResolveInput)) backends.Container {
	t.Helper()
	c := createApp(t, b, project, app, mod...)
	if err := b.Start(testContext(t), c.ID); err != nil {
		t.Fatalf("start %s: %v", c.Name, err)
	}
	return c
}

// execOut runs a command and returns its exit code and combined output.
func execOut(t *testing.T, b *Backend, id string, cmd ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code, err := b.Exec(testContext(t), id, backends.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatalf("exec %v: %v", cmd, err)
	}
	return code, out.String()
}

// eventually retries f until it returns true or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sh(script string) spec.Command { return spec.Command{"sh", "-c", script} }

// sleeper traps TERM so stops are quick.
var sleeper = sh("trap 'exit 0' TERM; while true; do sleep 0.1; done")
