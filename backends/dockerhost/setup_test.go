package dockerhost

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/spec"
)

// testRef is the busybox image every daemon test runs (loaded, never pulled).
const testRef = "cornus-test/busybox:1"

// newTestBackend connects to the real daemon. Unreachable: fail under
// CI=true, skip otherwise with how to start one.
func newTestBackend(t *testing.T) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, WithEnviron(os.Environ()))
	if err != nil {
		if !errdefs.IsUnavailable(err) {
			t.Fatalf("New: %v (want an Unavailable error when the daemon is unreachable)", err)
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("docker daemon required under CI: %v", err)
		}
		t.Skipf("docker daemon unreachable; start it with scripts/dockerd.sh (or `dockerd &`): %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// ensureImage loads an image built by testimage unless the daemon has it.
func ensureImage(t *testing.T, b *Backend, o testimage.Options) {
	t.Helper()
	ctx := testContext(t)
	if _, err := b.InspectImage(ctx, o.Ref); err == nil {
		return
	}
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, o); err != nil {
		t.Fatalf("build image: %v", err)
	}
	refs, err := b.LoadImage(ctx, &buf)
	if err != nil {
		t.Fatalf("load image: %v", err)
	}
	if len(refs) == 0 {
		t.Fatalf("load image: no refs reported")
	}
}

// setup is the usual start of a daemon test.
func setup(t *testing.T) (*Backend, context.Context) {
	t.Helper()
	b := newTestBackend(t)
	ensureImage(t, b, testimage.Options{Ref: testRef})
	return b, testContext(t)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// unique returns a name unique to this test run.
func unique(t *testing.T, prefix string) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "cornus-t-" + prefix + "-" + hex.EncodeToString(b[:])
}

// createApp creates a container and removes it (with its anonymous
// volumes) when the test ends, pass or fail.
func createApp(t *testing.T, b *Backend, project string, app spec.App, mod ...func(*backends.ResolveInput)) backends.Container {
	t.Helper()
	if app.Image == "" {
		app.Image = testRef
	}
	name := unique(t, app.Name)
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

func cleanupNetwork(t *testing.T, b *Backend, labels map[string]string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		nets, err := b.ListNetworks(ctx, backends.ListOptions{Labels: labels})
		if err != nil {
			t.Errorf("cleanup networks: %v", err)
			return
		}
		for _, n := range nets {
			if err := b.RemoveNetwork(ctx, n.ID); err != nil && !errdefs.IsNotFound(err) {
				t.Errorf("cleanup network %s: %v", n.Name, err)
			}
		}
	})
}

func cleanupVolume(t *testing.T, b *Backend, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.RemoveVolume(ctx, name, true); err != nil && !errdefs.IsNotFound(err) {
			t.Errorf("cleanup volume %s: %v", name, err)
		}
	})
}

// execOut runs a command and returns its exit code and combined output.
func execOut(t *testing.T, b *Backend, id string, cmd ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code, err := b.Exec(testContext(t), id, backends.ExecOptions{Cmd: cmd, Stdout: &out})
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

func logsOf(t *testing.T, b *Backend, id string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := b.Logs(testContext(t), id, backends.LogOptions{Tail: -1, Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatalf("logs: %v", err)
	}
	return stdout.String(), stderr.String()
}

func trimmed(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r", "")) }

// resolved is backends.Resolve for a test's input.
func resolved(t *testing.T, in backends.ResolveInput) backends.ContainerSpec {
	t.Helper()
	cs, err := backends.Resolve(in)
	if err != nil {
		t.Fatalf("resolve %s: %v", in.Name, err)
	}
	return cs
}
