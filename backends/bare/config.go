package bare

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
	EnvRuntime            = "CORNUS_BARE_RUNTIME"
	EnvSnapshotter        = "CORNUS_BARE_SNAPSHOTTER"
	EnvInsecureRegistries = "CORNUS_BARE_INSECURE_REGISTRIES"
	EnvDNS                = "CORNUS_BARE_DNS"
	EnvLogMaxBytes        = "CORNUS_BARE_LOG_MAX_BYTES"
	EnvStatsSource        = "CORNUS_BARE_STATS_SOURCE"
	EnvDataDir            = "CORNUS_DATA_DIR"
	EnvCNIBinDir          = "CORNUS_CNI_BIN_DIR"
	// EnvMonitorBinary names the cornus executable monitors run, where the
	// running program is not cornus (tests).
	EnvMonitorBinary = "CORNUS_MONITOR_BINARY"
)

// Defaults and the snapshotters.
const (
	DefaultRuntime     = "runc"
	DefaultDataDir     = "/var/lib/cornus"
	SnapshotterOverlay = "overlayfs"
	SnapshotterNative  = "native"
	// cgroupParent is where containers' cgroups go (/<parent>/<id>).
	cgroupParent = "cornus-bare"
)

// config is the backend's settings, read once from the environment.
type config struct {
	runtime       string // the OCI runtime binary (name or path)
	snapshotter   string
	insecure      []string
	dns           bool
	logMaxBytes   int64
	statsSource   string // "" by runtime; cgroups or runtime
	dataDir       string // <CORNUS_DATA_DIR>/bare: images, records, volumes, containers
	stateDir      string // <CORNUS_STATE_DIR>/bare (tmpfs): the runtime's state
	environ       []string
	monitorBinary string
}

func configFrom(environ []string) (config, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c := config{
		runtime: firstNonEmpty(env[EnvRuntime], DefaultRuntime), snapshotter: firstNonEmpty(env[EnvSnapshotter], SnapshotterOverlay),
		dataDir: filepath.Join(firstNonEmpty(env[EnvDataDir], DefaultDataDir), "bare"), environ: environ,
		stateDir: filepath.Join(svc.StateDir(environ), "bare"), monitorBinary: env[EnvMonitorBinary], dns: true,
		statsSource: env[EnvStatsSource],
	}
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
		c.dns = false
	default:
		return c, fmt.Errorf("%s=%q: want true or false: %w", EnvDNS, env[EnvDNS], errdefs.ErrInvalidArgument)
	}
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
		return c, fmt.Errorf("the bare backend needs root (it mounts root filesystems, creates network namespaces and cgroups); "+
			"rootless operation is out of scope for now: run cornus as root, or use CORNUS_DEPLOY_BACKEND=podman for rootless containers: %w",
			errdefs.ErrPermissionDenied)
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

// Paths under the data and state dirs.
func (c config) recordsDir() string            { return filepath.Join(c.dataDir, "records") }
func (c config) containerDir(id string) string { return filepath.Join(c.dataDir, "containers", id) }
func (c config) volumesDir() string            { return filepath.Join(c.dataDir, "volumes") }
func (c config) eventsDir() string             { return filepath.Join(c.dataDir, "events") }
func (c config) imagesDir() string             { return filepath.Join(c.dataDir, "images") }
func (c config) layersDir() string             { return filepath.Join(c.dataDir, "layers") }
func (c config) runtimeRoot() string           { return filepath.Join(c.stateDir, "runtime") }

// Paths in a container's directory (the runtime bundle).
func (c config) bundleDir(id string) string { return c.containerDir(id) }
func (c config) rootfsDir(id string) string { return filepath.Join(c.containerDir(id), "rootfs") }
func (c config) upperDir(id string) string  { return filepath.Join(c.containerDir(id), "upper") }
func (c config) workDir(id string) string   { return filepath.Join(c.containerDir(id), "work") }
