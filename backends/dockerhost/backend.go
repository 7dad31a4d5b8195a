package dockerhost

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/hostlock"
)

// Name is the backend's name in the registry and in warnings.
const Name = "dockerhost"

// Environment variables that choose the Docker socket, in order.
const (
	EnvDockerHost = "DOCKER_HOST"        // any Docker host URL (unix://, tcp://)
	EnvDockerSock = "CORNUS_DOCKER_SOCK" // a socket path or unix:// URL
)

// DefaultHost is the socket used when neither variable is set.
const DefaultHost = "unix:///var/run/docker.sock"

// Backend runs containers on one Docker Engine.
type Backend struct {
	cli  *client.Client
	host string
	api  string // negotiated API version, e.g. "1.41"

	// ensureMu serialises EnsureNetwork/EnsureVolume within this process;
	// network creations also take the host lock (networkLock) for other
	// processes, and the label re-check after creation covers the rest
	// (another host's cornus, docker compose).
	ensureMu sync.Mutex
	lockDir  string // of hostlock

	remote bool // EnvRemote
}

var _ backends.Backend = (*Backend)(nil)

// Option configures New. Options do no I/O and may come in any order.
type Option func(*config)

type config struct {
	host    string
	environ []string
}

// WithHost sets the Docker host URL (unix:///path, tcp://host:port),
// overriding the environment.
func WithHost(host string) Option { return func(c *config) { c.host = host } }

// WithEnviron gives the KEY=VALUE environment that DOCKER_HOST,
// CORNUS_DOCKER_SOCK and CORNUS_DOCKER_REMOTE are read from (the package
// never reads os.Environ).
func WithEnviron(environ []string) Option {
	return func(c *config) { c.environ = environ }
}

// New connects to the Docker daemon, negotiates the API version and pings
// it. An unreachable daemon is an errdefs.Unavailable error that says how
// to start one.
func New(ctx context.Context, opts ...Option) (*Backend, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	host := c.host
	if host == "" {
		host = HostFromEnv(c.environ)
	}
	cli, err := client.New(client.WithHost(host), client.WithAPIVersionNegotiation(), client.WithHTTPResponseHook(noteEventsAnswer))
	if err != nil {
		return nil, fmt.Errorf("docker client for %s: %w: %w", host, errdefs.ErrInvalidArgument, err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("docker daemon at %s is unreachable (start it with `dockerd &` or scripts/dockerd.sh, or point %s or %s at a running daemon): %w: %w",
			host, EnvDockerHost, EnvDockerSock, errdefs.ErrUnavailable, err)
	}
	environ := c.environ
	if environ == nil {
		environ = []string{} // never the process's
	}
	return &Backend{cli: cli, host: host, api: cli.ClientVersion(), lockDir: hostlock.DefaultDir(environ, os.Geteuid()),
		remote: remoteOn(environ)}, nil
}

// HostFromEnv picks the Docker host: DOCKER_HOST, else CORNUS_DOCKER_SOCK
// (a path or a unix:// URL), else DefaultHost.
func HostFromEnv(environ []string) string {
	get := func(key string) string { return strings.TrimSpace(envValue(environ, key)) }
	if h := get(EnvDockerHost); h != "" {
		return h
	}
	if s := get(EnvDockerSock); s != "" {
		if strings.Contains(s, "://") {
			return s
		}
		return "unix://" + s
	}
	return DefaultHost
}

// Name returns "dockerhost".
func (b *Backend) Name() string { return Name }

// Host is the daemon address in use.
func (b *Backend) Host() string { return b.host }

// APIVersion is the negotiated Engine API version.
func (b *Backend) APIVersion() string { return b.api }

// Close releases the client's idle connections.
func (b *Backend) Close() error { return b.cli.Close() }
