package podman

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
)

// privateSocket is where scripts/podman.sh runs the service tests use
// when CORNUS_PODMAN_SOCKET is unset (a test default only: the backend
// itself has none).
const privateSocket = "/run/cornus-podman/podman.sock"

// testEnviron is the environment a test backend reads.
func testEnviron() []string {
	env := os.Environ()
	if os.Getenv(EnvSocket) == "" && os.Getenv(EnvService) == "" {
		env = append(env, EnvSocket+"="+privateSocket)
	}
	return env
}

// newTestBackend connects to the real podman service. Unreachable: fail
// under CI=true, skip otherwise with how to start one.
func newTestBackend(t *testing.T) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := New(ctx, WithEnviron(testEnviron()))
	if err == nil {
		err = b.Ping(ctx)
		if err != nil {
			_ = b.Close()
		}
	}
	if err != nil {
		if !errdefs.IsUnavailable(err) {
			t.Fatalf("podman backend: %v (want an Unavailable error when the service is unreachable)", err)
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("podman service required under CI: %v", err)
		}
		t.Skipf("podman service unreachable; start it with scripts/podman.sh: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestContract runs the backend contract suite against the real podman
// service (issue 9).
func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t) })
}
