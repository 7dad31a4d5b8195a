package podman

import (
	"fmt"
	"os"
	"testing"

	"github.com/cornus-dev/cornus/internal/testbin"
)

// TestMain builds cornus for the healthcheck drivers (a test binary is
// refused: CORNUS_MONITOR_BINARY, if set, names a built one instead) and
// gives the run a data dir of its own for their lock files, removed
// afterwards.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cornus-podman-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(EnvDataDir, dir)
	var code int
	if os.Getenv(EnvMonitorBinary) != "" {
		code = m.Run()
	} else {
		var bin string
		code = testbin.Run(func() int {
			os.Setenv(EnvMonitorBinary, bin)
			return m.Run()
		}, "../../cmd/cornus", &bin)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
