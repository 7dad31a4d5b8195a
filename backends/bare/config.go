package bare

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
	EnvRuntime            = "CORNUS_BARE_RUNTIME"
	EnvSnapshotter        = "CORNUS_BARE_SNAPSHOTTER"
	EnvInsecureRegistries = "CORNUS_BARE_INSECURE_REGISTRIES"
	EnvDNS                = "CORNUS_BARE_DNS"
	EnvLogMaxBytes        = "CORNUS_BARE_LOG_MAX_BYTES"
	EnvStatsSource        = "CORNUS_BARE_STATS_SOURCE"
	// EnvRemote "1" is the backend's remote mode (backends.RemoteModer):
	// client-local mounts and credentials go to a caretaker companion
	// next to the app instead of the server's host; mounts only
	// (backends.RemoteMountsOnly): the runtime is the server's host, which
	// reaches the workloads' networks itself.
	EnvRemote    = "CORNUS_BARE_REMOTE"
	EnvDataDir   = daemonless.EnvDataDir
	EnvCNIBinDir = daemonless.EnvCNIBinDir
	// EnvMonitorBinary names the cornus executable monitors run, where the
	// running program is not cornus (tests).
	EnvMonitorBinary = daemonless.EnvMonitorBinary
)

// Defaults and the snapshotters.
const (
	DefaultRuntime     = "runc"
	DefaultDataDir     = daemonless.DefaultDataDir
	SnapshotterOverlay = "overlayfs"
	SnapshotterNative  = "native"
	// cgroupParent is where containers' cgroups go (/<parent>/<id>).
	cgroupParent = "cornus-bare"
)

// config is the backend's settings, read once from the environment: the
// core's (data dir <CORNUS_DATA_DIR>/bare for images, records, volumes
// and containers; state dir <CORNUS_STATE_DIR>/bare on tmpfs for the
// runtime's state) and the runtime's own.
type config struct {
	daemonless.Config
	runtime     string // the OCI runtime binary (name or path)
	snapshotter string
	statsSource string // "" by runtime; cgroups or runtime
	remote      bool   // EnvRemote
}

func configFrom(environ []string) (config, error) {
	core, env, err := daemonless.ReadConfig(Name, daemonless.Vars{LogMaxBytes: EnvLogMaxBytes, InsecureRegistries: EnvInsecureRegistries}, environ)
	c := config{Config: core, runtime: cmp.Or(env[EnvRuntime], DefaultRuntime),
		snapshotter: cmp.Or(env[EnvSnapshotter], SnapshotterOverlay), statsSource: env[EnvStatsSource], remote: env[EnvRemote] == "1"}
	switch c.snapshotter {
	case SnapshotterOverlay, "overlay":
		c.snapshotter = SnapshotterOverlay
	case SnapshotterNative:
	default:
		return c, fmt.Errorf("%s=%q: want %s or %s: %w", EnvSnapshotter, c.snapshotter, SnapshotterOverlay, SnapshotterNative, errdefs.ErrInvalidArgument)
	}
	if _, err := statsSource(c.statsSource, ""); err != nil {
		return c, err
	}
	switch strings.ToLower(env[EnvDNS]) {
	case "", "1", "true", "yes", "on":
	case "0", "false", "no", "off":
		c.DNS = false
	default:
		return c, fmt.Errorf("%s=%q: want true or false: %w", EnvDNS, env[EnvDNS], errdefs.ErrInvalidArgument)
	}
	if err != nil {
		return c, err
	}
	if os.Geteuid() != 0 {
		return c, fmt.Errorf("the bare backend needs root (it mounts root filesystems, creates network namespaces and cgroups); "+
			"rootless operation is out of scope for now: run cornus as root, or use CORNUS_DEPLOY_BACKEND=podman for rootless containers: %w",
			errdefs.ErrPermissionDenied)
	}
	return c, nil
}

// Paths under the data and state dirs.
func (c config) imagesDir() string   { return filepath.Join(c.DataDir, "images") }
func (c config) layersDir() string   { return filepath.Join(c.DataDir, "layers") }
func (c config) runtimeRoot() string { return filepath.Join(c.StateDir, "runtime") }

// Paths in a container's directory (the runtime bundle).
func (c config) bundleDir(id string) string { return c.ContainerDir(id) }
func (c config) rootfsDir(id string) string { return filepath.Join(c.ContainerDir(id), "rootfs") }
func (c config) upperDir(id string) string  { return filepath.Join(c.ContainerDir(id), "upper") }
func (c config) workDir(id string) string   { return filepath.Join(c.ContainerDir(id), "work") }
