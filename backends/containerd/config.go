package containerd

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/daemonless"
)

// Environment variables the backend reads (from the environ it is given).
const (
	EnvAddress            = "CORNUS_CONTAINERD_ADDRESS"
	EnvAddressFallback    = "CONTAINERD_ADDRESS"
	EnvNamespace          = "CORNUS_CONTAINERD_NAMESPACE"
	EnvSnapshotter        = "CORNUS_CONTAINERD_SNAPSHOTTER"
	EnvInsecureRegistries = "CORNUS_CONTAINERD_INSECURE_REGISTRIES"
	EnvLogMaxBytes        = "CORNUS_CONTAINERD_LOG_MAX_BYTES"
	EnvDataDir            = daemonless.EnvDataDir
	EnvCNIBinDir          = daemonless.EnvCNIBinDir
	// EnvMonitorBinary names the cornus executable monitors run, where the
	// running program is not cornus (tests).
	EnvMonitorBinary = daemonless.EnvMonitorBinary
	// EnvRemote "1" is the backend's remote mode (backends.RemoteModer):
	// the daemon may not share this host's mounts, so `cornus serve` gives
	// every replica a caretaker companion that mounts inside.
	EnvRemote = "CORNUS_CONTAINERD_REMOTE"
)

// Defaults.
const (
	DefaultAddress     = "/run/containerd/containerd.sock"
	DefaultNamespace   = "cornus"
	DefaultSnapshotter = "overlayfs"
	DefaultDataDir     = daemonless.DefaultDataDir
	runtimeName        = "io.containerd.runc.v2"
)

// config is the backend's settings, read once from the environment: the
// core's (data dir <CORNUS_DATA_DIR>/containerd for records, volumes and
// container files; state dir <CORNUS_STATE_DIR>/containerd on tmpfs for
// runc's state, FIFOs and netns pins) and containerd's own.
type config struct {
	daemonless.Config
	address     string
	namespace   string
	snapshotter string
	remote      bool // EnvRemote
}

func configFrom(environ []string) (config, error) {
	core, env, err := daemonless.ReadConfig(Name, daemonless.Vars{LogMaxBytes: EnvLogMaxBytes, InsecureRegistries: EnvInsecureRegistries}, environ)
	c := config{Config: core,
		address:   strings.TrimPrefix(cmp.Or(env[EnvAddress], env[EnvAddressFallback], DefaultAddress), "unix://"),
		namespace: cmp.Or(env[EnvNamespace], DefaultNamespace), snapshotter: cmp.Or(env[EnvSnapshotter], DefaultSnapshotter),
		remote: env[EnvRemote] == "1",
	}
	if err != nil {
		return c, err
	}
	if os.Geteuid() != 0 {
		return c, fmt.Errorf("the containerd backend needs root (it creates network namespaces and mounts): %w", errdefs.ErrPermissionDenied)
	}
	return c, nil
}

// Paths under the state dir.
func (c config) runcRoot() string { return filepath.Join(c.StateDir, "runc") }
func (c config) fifoDir() string  { return filepath.Join(c.StateDir, "fifo") }
