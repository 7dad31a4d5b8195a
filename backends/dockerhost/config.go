package dockerhost

import (
	"strings"

	"github.com/cornus-dev/cornus/internal/envlist"
)

// Environment variables that choose the Docker socket, in order.
const (
	EnvDockerHost = "DOCKER_HOST"        // any Docker host URL (unix://, tcp://)
	EnvDockerSock = "CORNUS_DOCKER_SOCK" // a socket path or unix:// URL
)

// DefaultHost is the socket used when neither variable is set.
const DefaultHost = "unix:///var/run/docker.sock"

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

// HostFromEnv picks the Docker host: DOCKER_HOST, else CORNUS_DOCKER_SOCK
// (a path or a unix:// URL), else DefaultHost.
func HostFromEnv(environ []string) string {
	get := func(key string) string { return strings.TrimSpace(envlist.Get(environ, key)) }
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
