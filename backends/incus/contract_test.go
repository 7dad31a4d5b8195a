package incus

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/internal/testbin"
)

// cornusBin is the cornus binary containers run as their init (tests run
// from a test binary, which cannot be `cornus monitor incus`).
var cornusBin string

func TestMain(m *testing.M) { testbin.Main(m.Run, "../../cmd/cornus", &cornusBin) }

// testEnviron is the environment a test backend reads: a data directory
// of the test's own and the freshly built init binary.
func testEnviron(t *testing.T) []string {
	return append(os.Environ(), EnvDataDir+"="+t.TempDir(), EnvInitBinary+"="+cornusBin)
}

func newTestBackend(t *testing.T) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, WithEnviron(testEnviron(t)))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("incus required under CI: %v", err)
		}
		t.Skipf("incus unreachable; start it with scripts/incus.sh: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestContract runs the backend contract suite against the real incusd
// (issue 15).
func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t) })
}
