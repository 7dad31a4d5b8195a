package daemonless

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/svc"
)

// Variables every daemonless backend reads alike.
const (
	EnvDataDir   = "CORNUS_DATA_DIR"
	EnvCNIBinDir = "CORNUS_CNI_BIN_DIR"
	// EnvMonitorBinary names the cornus executable monitors run, where the
	// running program is not cornus (tests).
	EnvMonitorBinary = "CORNUS_MONITOR_BINARY"
	// DefaultDataDir is where a backend keeps its data without EnvDataDir.
	DefaultDataDir = "/var/lib/cornus"
)

// Config is what the core knows of a backend's settings.
type Config struct {
	Name          string   // the backend's name: labels, the monitor subcommand, messages
	DataDir       string   // <CORNUS_DATA_DIR>/<name>: records, volumes, containers, events
	StateDir      string   // <CORNUS_STATE_DIR>/<name> (tmpfs): the runtime's state
	Environ       []string // what the backend read, and its monitors inherit
	MonitorBinary string   // EnvMonitorBinary
	LogMaxBytes   int64    // the backend's log size variable: a monitor's log rotation size (0: its default)
	Insecure      []string // the backend's insecure registries variable: registries spoken to over plain HTTP
	DNS           bool     // monitors serve DNS on their networks' gateways
}

// Vars names a backend's own variables for the settings every daemonless
// backend has.
type Vars struct {
	LogMaxBytes        string // a positive number of bytes
	InsecureRegistries string // a comma-separated list of hosts
}

// ReadConfig reads the settings every daemonless backend has from
// environ: the data and state directories under name, the monitor
// binary, and the backend's vars. It returns the environment as a map
// for the backend's own settings.
func ReadConfig(name string, vars Vars, environ []string) (Config, map[string]string, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c := Config{
		Name: name, DataDir: filepath.Join(cmp.Or(env[EnvDataDir], DefaultDataDir), name),
		StateDir: filepath.Join(svc.StateDir(environ), name), Environ: environ,
		MonitorBinary: env[EnvMonitorBinary], DNS: true,
	}
	for _, r := range strings.Split(env[vars.InsecureRegistries], ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.Insecure = append(c.Insecure, r)
		}
	}
	key := vars.LogMaxBytes
	if v := env[key]; v != "" {
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
			return c, env, fmt.Errorf("%s=%q: want a positive number of bytes: %w", key, v, errdefs.ErrInvalidArgument)
		}
		c.LogMaxBytes = n
	}
	return c, env, nil
}

// Paths under the data dir.

// RecordsDir holds the containers' records.
func (c Config) RecordsDir() string { return filepath.Join(c.DataDir, "records") }

// ContainersDir holds a directory per container.
func (c Config) ContainersDir() string { return filepath.Join(c.DataDir, "containers") }

// ContainerDir is the directory of container id.
func (c Config) ContainerDir(id string) string { return filepath.Join(c.ContainersDir(), id) }

// VolumesDir holds the volumes.
func (c Config) VolumesDir() string { return filepath.Join(c.DataDir, "volumes") }

// NetworksDir holds the networks.
func (c Config) NetworksDir() string { return filepath.Join(c.DataDir, "networks") }

// EventsDir holds the events journal.
func (c Config) EventsDir() string { return filepath.Join(c.DataDir, "events") }
