package podman

import (
	"cmp"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"
)

// Environment variables that choose the endpoint. Exactly one must be set:
// there is no default endpoint and no probing (CONTAINER_HOST, DOCKER_HOST
// and the stock socket paths are ignored).
const (
	// EnvSocket names a running service: a socket path, unix:///path,
	// tcp://host:port or ssh://[user@]host[:port]/path.
	EnvSocket = "CORNUS_PODMAN_SOCKET"
	// EnvService=1 makes cornus start `podman system service` itself on a
	// private socket and supervise it.
	EnvService = "CORNUS_PODMAN_SERVICE"
	// EnvRemote "1" is the backend's remote mode (backends.RemoteModer):
	// `cornus serve` gives every replica a caretaker companion in its
	// network namespace, which mounts the client-local mounts and dials
	// port-forwards and tunnels next to the app (a rootless service's
	// networks are not the host's).
	EnvRemote = "CORNUS_PODMAN_REMOTE"
	// EnvPodmanBinary overrides the podman executable service mode runs.
	EnvPodmanBinary = "CORNUS_PODMAN_BINARY"
	// EnvDataDir is cornus's data directory; the backend keeps its
	// healthcheck drivers' lock files in <EnvDataDir>/podman/health.
	EnvDataDir = "CORNUS_DATA_DIR"
	// EnvMonitorBinary names the cornus executable healthcheck drivers run,
	// where the running program is not cornus (tests); the containerd
	// backend's monitors read the same variable.
	EnvMonitorBinary = "CORNUS_MONITOR_BINARY"
)

// DefaultDataDir is the data directory when CORNUS_DATA_DIR is unset.
const DefaultDataDir = "/var/lib/cornus"

// endpoint is where the libpod API is: a unix socket or a TCP address.
type endpoint struct {
	network string // "unix" or "tcp"
	address string // socket path or host:port
}

// String is the endpoint as the user names it, for messages.
func (e endpoint) String() string {
	if e.network == "unix" {
		return "unix://" + e.address
	}
	return e.network + "://" + e.address
}

// config is what New reads from its options and the environment.
type config struct {
	environ []string
	// endpoint is set for CORNUS_PODMAN_SOCKET; service for
	// CORNUS_PODMAN_SERVICE=1.
	endpoint *endpoint
	service  bool
	remote   bool
	podman   string // the podman executable for service mode
	// dataDir is <CORNUS_DATA_DIR>/podman: the healthcheck drivers' files.
	dataDir string
	// driverBinary is the cornus executable drivers run (empty: this one).
	driverBinary string
}

// configFrom reads the endpoint selection: exactly one of EnvSocket and
// EnvService.
func configFrom(environ []string) (config, error) {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = strings.TrimSpace(v) // the last one wins, as in a shell
		}
	}
	c := config{
		environ: environ, remote: env[EnvRemote] == "1", podman: cmp.Or(env[EnvPodmanBinary], "podman"),
		dataDir: filepath.Join(cmp.Or(env[EnvDataDir], DefaultDataDir), "podman"), driverBinary: env[EnvMonitorBinary],
	}
	sock, svc := env[EnvSocket], env[EnvService]
	switch svc {
	case "", "0":
	case "1":
		c.service = true
	default:
		return c, fmt.Errorf("%s=%q: want 1 (start a private podman service) or unset: %w", EnvService, svc, errdefs.ErrInvalidArgument)
	}
	switch {
	case sock != "" && c.service:
		return c, fmt.Errorf("both %s and %s=1 are set: choose one (a running service's socket, or a service cornus starts itself): %w",
			EnvSocket, EnvService, errdefs.ErrInvalidArgument)
	case sock == "" && !c.service:
		return c, fmt.Errorf("the podman backend needs an endpoint: set %s to a podman service socket (a path, unix://, tcp:// or ssh://), "+
			"or %s=1 to let cornus start `podman system service` itself: %w", EnvSocket, EnvService, errdefs.ErrInvalidArgument)
	case sock != "":
		ep, err := parseEndpoint(sock)
		if err != nil {
			return c, err
		}
		c.endpoint = &ep
	}
	return c, nil
}

// parseEndpoint reads CORNUS_PODMAN_SOCKET.
func parseEndpoint(s string) (endpoint, error) {
	if !strings.Contains(s, "://") {
		if !filepath.IsAbs(s) {
			return endpoint{}, fmt.Errorf("%s=%q: a socket path must be absolute: %w", EnvSocket, s, errdefs.ErrInvalidArgument)
		}
		return endpoint{network: "unix", address: filepath.Clean(s)}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return endpoint{}, fmt.Errorf("%s=%q: %v: %w", EnvSocket, s, err, errdefs.ErrInvalidArgument)
	}
	switch u.Scheme {
	case "unix":
		p := u.Path
		// A host (as in unix://relative/path) means the path is relative.
		if u.Host != "" {
			return endpoint{}, fmt.Errorf("%s=%q: want unix:///absolute/path: %w", EnvSocket, s, errdefs.ErrInvalidArgument)
		}
		if !filepath.IsAbs(p) {
			return endpoint{}, fmt.Errorf("%s=%q: a socket path must be absolute: %w", EnvSocket, s, errdefs.ErrInvalidArgument)
		}
		return endpoint{network: "unix", address: filepath.Clean(p)}, nil
	case "tcp":
		if u.Host == "" || u.Port() == "" {
			return endpoint{}, fmt.Errorf("%s=%q: want tcp://host:port: %w", EnvSocket, s, errdefs.ErrInvalidArgument)
		}
		return endpoint{network: "tcp", address: u.Host}, nil
	case "ssh":
		// An SSH transport needs an SSH client library this build does not
		// carry (golang.org/x/crypto/ssh); OpenSSH forwards the socket.
		return endpoint{}, fmt.Errorf("%s=%q: ssh:// endpoints are not supported yet; forward the remote socket with OpenSSH instead "+
			"(ssh -fNL /run/cornus-podman-remote.sock:%s %s) and set %s=/run/cornus-podman-remote.sock: %w",
			EnvSocket, s, remoteSocketPath(u), sshDestination(u), EnvSocket, errdefs.ErrNotImplemented)
	}
	return endpoint{}, fmt.Errorf("%s=%q: unknown scheme %q (want a path, unix://, tcp:// or ssh://): %w", EnvSocket, s, u.Scheme, errdefs.ErrInvalidArgument)
}

// sshDestination is OpenSSH's [-p PORT] [USER@]HOST for an ssh:// URL.
func sshDestination(u *url.URL) string {
	dest := u.Hostname()
	if u.User != nil && u.User.Username() != "" {
		dest = u.User.Username() + "@" + dest
	}
	if u.Port() != "" {
		dest = "-p " + u.Port() + " " + dest
	}
	return dest
}

func remoteSocketPath(u *url.URL) string {
	if u.Path != "" {
		return u.Path
	}
	return "/run/podman/podman.sock"
}

// Option configures New. Options do no I/O and may come in any order.
type Option func(*options)

type options struct{ environ []string }

// WithEnviron gives the KEY=VALUE environment the endpoint selection is
// read from (the package never reads os.Environ).
func WithEnviron(environ []string) Option { return func(o *options) { o.environ = environ } }
