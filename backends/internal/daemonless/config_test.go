package daemonless

import (
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// Issue 23: the settings both daemonless backends read come from the
// variables each names — data dir under the backend's name, registries
// trimmed, a bad log size refused naming its variable.
func TestReadConfig(t *testing.T) {
	vars := Vars{LogMaxBytes: "X_LOG_MAX_BYTES", InsecureRegistries: "X_INSECURE_REGISTRIES"}
	c, _, err := ReadConfig("x", vars, []string{EnvDataDir + "=/d", "X_INSECURE_REGISTRIES=a:5000, b,", "X_LOG_MAX_BYTES=10", EnvMonitorBinary + "=/m"})
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/d/x" || c.ContainerDir("i") != "/d/x/containers/i" || len(c.Insecure) != 2 || c.Insecure[1] != "b" ||
		c.LogMaxBytes != 10 || c.MonitorBinary != "/m" || !c.DNS {
		t.Fatalf("config %+v", c)
	}
	if _, _, err := ReadConfig("x", vars, []string{"X_LOG_MAX_BYTES=-1"}); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "X_LOG_MAX_BYTES") {
		t.Fatalf("bad log size: %v", err)
	}
}
