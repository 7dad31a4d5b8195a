package incus

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"
)

// Environment variables the backend reads (from the environ it is given).
const (
	EnvSocket             = "CORNUS_INCUS_SOCKET"
	EnvProject            = "CORNUS_INCUS_PROJECT"
	EnvInsecureRegistries = "CORNUS_INCUS_INSECURE_REGISTRIES"
	// EnvNetwork is the managed bridge an app without networks joins
	// (scripts/incus.sh makes it).
	EnvNetwork = "CORNUS_INCUS_NETWORK"
	// EnvSubnetBase is the /16 project networks get their /24s from.
	EnvSubnetBase = "CORNUS_INCUS_SUBNET_BASE"
	EnvDataDir    = "CORNUS_DATA_DIR"
	// EnvInitBinary names the cornus executable containers run as their
	// init, where the running program is not cornus (tests).
	EnvInitBinary = "CORNUS_INCUS_INIT_BINARY"
	// EnvRemote "1" is the backend's remote mode (backends.RemoteModer),
	// with sibling companions (remote.go).
	EnvRemote = "CORNUS_INCUS_REMOTE"
)

// Defaults.
const (
	DefaultSocket     = "/var/lib/incus/unix.socket"
	DefaultProject    = "default"
	DefaultNetwork    = "cornus"
	DefaultSubnetBase = "10.77.0.0/16"
	DefaultDataDir    = "/var/lib/cornus"
)

// config is the backend's settings, read once from the environment.
type config struct {
	socket     string
	project    string
	network    string
	subnetBase string
	insecure   []string
	dataDir    string // <CORNUS_DATA_DIR>/incus: records, the init binary, locks
	initBinary string
	remote     bool
}

func configFrom(environ []string) (config, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c := config{
		socket:     strings.TrimPrefix(firstNonEmpty(env[EnvSocket], DefaultSocket), "unix://"),
		project:    firstNonEmpty(env[EnvProject], DefaultProject),
		network:    firstNonEmpty(env[EnvNetwork], DefaultNetwork),
		subnetBase: firstNonEmpty(env[EnvSubnetBase], DefaultSubnetBase),
		dataDir:    filepath.Join(firstNonEmpty(env[EnvDataDir], DefaultDataDir), "incus"),
		initBinary: env[EnvInitBinary],
		remote:     env[EnvRemote] == "1",
	}
	if strings.Contains(c.socket, "://") {
		return c, fmt.Errorf("%s=%q: want the path of incusd's unix socket (a remote incusd over HTTPS is not supported): %w", EnvSocket, c.socket, errdefs.ErrInvalidArgument)
	}
	if c.project != url.PathEscape(c.project) {
		return c, fmt.Errorf("%s=%q: not an Incus project name: %w", EnvProject, c.project, errdefs.ErrInvalidArgument)
	}
	for _, r := range strings.Split(env[EnvInsecureRegistries], ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.insecure = append(c.insecure, r)
		}
	}
	if os.Geteuid() != 0 {
		return c, fmt.Errorf("the incus backend needs root (it shares directories with incusd's containers): %w", errdefs.ErrPermissionDenied)
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
func (c config) recordsDir() string { return filepath.Join(c.dataDir, "records") }
func (c config) binDir() string     { return filepath.Join(c.dataDir, "bin") }

// lockDir holds host-wide locks; it does not follow CORNUS_DATA_DIR, so
// every cornus on the host meets there.
func (c config) lockDir() string { return "/run/cornus-incus/locks" }

// Paths inside a container.
const (
	ctrBase    = "/.cornus"
	ctrBinDir  = ctrBase + "/bin"
	ctrRecords = ctrBase + "/records"
)

// Option configures New. Options do no I/O and may come in any order.
type Option func(*options)

type options struct{ environ []string }

// WithEnviron gives the KEY=VALUE environment the configuration is read
// from (the package never reads os.Environ).
func WithEnviron(environ []string) Option { return func(o *options) { o.environ = environ } }
