package containerd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/svc"
)

// Environment variables the backend reads (from the environ it is given).
const (
	EnvAddress            = "CORNUS_CONTAINERD_ADDRESS"
	EnvAddressFallback    = "CONTAINERD_ADDRESS"
	EnvNamespace          = "CORNUS_CONTAINERD_NAMESPACE"
	EnvSnapshotter        = "CORNUS_CONTAINERD_SNAPSHOTTER"
	EnvInsecureRegistries = "CORNUS_CONTAINERD_INSECURE_REGISTRIES"
	EnvLogMaxBytes        = "CORNUS_CONTAINERD_LOG_MAX_BYTES"
	EnvDataDir            = "CORNUS_DATA_DIR"
	EnvCNIBinDir          = "CORNUS_CNI_BIN_DIR"
	// EnvMonitorBinary names the cornus executable monitors run, where the
	// running program is not cornus (tests).
	EnvMonitorBinary = "CORNUS_MONITOR_BINARY"
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
	DefaultDataDir     = "/var/lib/cornus"
	runtimeName        = "io.containerd.runc.v2"
)

// config is the backend's settings, read once from the environment.
type config struct {
	address       string
	namespace     string
	snapshotter   string
	insecure      []string
	logMaxBytes   int64
	dataDir       string // <CORNUS_DATA_DIR>/containerd: records, volumes, container files
	stateDir      string // <CORNUS_STATE_DIR>/containerd (tmpfs): runc state, FIFOs, netns pins
	environ       []string
	monitorBinary string
	remote        bool // EnvRemote
}

func configFrom(environ []string) (config, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c := config{
		address:   firstNonEmpty(env[EnvAddress], env[EnvAddressFallback], DefaultAddress),
		namespace: firstNonEmpty(env[EnvNamespace], DefaultNamespace), snapshotter: firstNonEmpty(env[EnvSnapshotter], DefaultSnapshotter),
		dataDir: filepath.Join(firstNonEmpty(env[EnvDataDir], DefaultDataDir), "containerd"), environ: environ,
		stateDir: filepath.Join(svc.StateDir(environ), "containerd"), monitorBinary: env[EnvMonitorBinary],
		remote: env[EnvRemote] == "1",
	}
	c.address = strings.TrimPrefix(c.address, "unix://")
	for _, r := range strings.Split(env[EnvInsecureRegistries], ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.insecure = append(c.insecure, r)
		}
	}
	if v := env[EnvLogMaxBytes]; v != "" {
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive number of bytes: %w", EnvLogMaxBytes, v, errdefs.ErrInvalidArgument)
		}
		c.logMaxBytes = n
	}
	if os.Geteuid() != 0 {
		return c, fmt.Errorf("the containerd backend needs root (it creates network namespaces and mounts): %w", errdefs.ErrPermissionDenied)
	}
	return c, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Paths under the data dir.
func (c config) recordsDir() string            { return filepath.Join(c.dataDir, "records") }
func (c config) containerDir(id string) string { return filepath.Join(c.dataDir, "containers", id) }
func (c config) volumesDir() string            { return filepath.Join(c.dataDir, "volumes") }
func (c config) eventsDir() string             { return filepath.Join(c.dataDir, "events") }
func (c config) runcRoot() string              { return filepath.Join(c.stateDir, "runc") }
func (c config) fifoDir() string               { return filepath.Join(c.stateDir, "fifo") }
