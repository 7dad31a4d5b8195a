package bare

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

// cornusBin is the cornus binary the monitors run (tests run from a test
// binary, which cannot be `cornus monitor`).
var cornusBin string

func TestMain(m *testing.M) { testbin.Main(m.Run, "../../cmd/cornus", &cornusBin) }

// testEnviron is the environment a test backend reads: a data and state
// dir of the test's own.
func testEnviron(t testing.TB, extra ...string) []string {
	dir := t.TempDir()
	env := append(os.Environ(),
		EnvDataDir+"="+filepath.Join(dir, "data"), "CORNUS_STATE_DIR="+filepath.Join(dir, "state"),
		EnvMonitorBinary+"="+cornusBin)
	return append(env, extra...)
}

// newTestBackend opens the backend on a private data dir; under CI a
// missing runtime or CNI plugin fails the test, elsewhere it skips saying
// how to install them. Cleanup removes the networks the test made.
func newTestBackend(t testing.TB, extra ...string) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := New(ctx, WithEnviron(testEnviron(t, extra...)))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runc and the CNI plugins are required under CI: %v", err)
		}
		t.Skipf("the bare backend cannot run here (as root: apt-get install runc containernetworking-plugins iptables): %v", err)
	}
	t.Cleanup(func() {
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

// TestContract runs the backend contract suite against real runc (issue 14).
func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t) })
}
