package bare

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
)

// CORNUS_BARE_RUNTIME=crun: where the host has no cgroup v1 hybrid layout
// and crun is installed, the whole contract suite runs on real crun. On a
// hybrid host (these test machines: v1 controllers plus cgroup2 at
// /sys/fs/cgroup/unified, where crun fails every container) opening the
// backend fails at once with that reason, whether or not crun is
// installed.
func TestContractCrun(t *testing.T) {
	if hybridCgroups() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		b, err := New(ctx, WithEnviron(testEnviron(t, EnvRuntime+"=crun")))
		if err == nil {
			_ = b.Close()
			t.Fatal("crun on a cgroup v1 hybrid host: the backend opened, want the refusal")
		}
		for _, want := range []string{EnvRuntime + "=crun", "hybrid", "use runc", "unified cgroup v2"} {
			if !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), want) {
				t.Fatalf("crun on a cgroup v1 hybrid host: %v; want a failed precondition saying %q", err, want)
			}
		}
		t.Logf("hybrid cgroups here, crun refused: %v", err)
		return
	}
	if _, err := exec.LookPath("crun"); err != nil {
		t.Skip("this host could run crun, which is not installed: apt-get install crun")
	}
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t, EnvRuntime+"=crun") })
}
