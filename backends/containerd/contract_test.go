package containerd

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/internal/testbin"
)

// privateSocket is where scripts/containerd.sh runs the private containerd
// tests use (never the one inside dockerd).
const privateSocket = "/run/cornus-containerd/containerd.sock"

// cornusBin is the cornus binary the monitors run (tests run from a test
// binary, which cannot be `cornus monitor`).
var cornusBin string

func TestMain(m *testing.M) { testbin.Main(m.Run, "../../cmd/cornus", &cornusBin) }

// testEnviron is the environment a test backend reads: the private
// containerd, a data and state dir of the test's own.
func testEnviron(t *testing.T) []string {
	dir := t.TempDir()
	env := append(os.Environ(),
		EnvDataDir+"="+filepath.Join(dir, "data"), "CORNUS_STATE_DIR="+filepath.Join(dir, "state"),
		EnvMonitorBinary+"="+cornusBin)
	if os.Getenv(EnvAddress) == "" {
		env = append(env, EnvAddress+"="+privateSocket)
	}
	return env
}

func newTestBackend(t *testing.T) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, WithEnviron(testEnviron(t)))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("containerd required under CI: %v", err)
		}
		t.Skipf("containerd unreachable; start it with scripts/containerd.sh: %v", err)
	}
	t.Cleanup(func() {
		// Networks the test made implicitly (the default bridge) go too.
		ctx := context.Background()
		if ns, err := b.ListNetworks(ctx, backends.ListOptions{}); err == nil {
			for _, n := range ns {
				if err := b.RemoveNetwork(ctx, n.ID); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}
		}
		_ = b.Close()
	})
	return b
}

// TestContract runs the backend contract suite against the real containerd
// (issue 8).
func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t) })
}
