package dockerhost

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/moby/moby/client/pkg/versions"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/hostlock"
)

// Name is the backend's name in the registry and in warnings.
const Name = "dockerhost"

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
	// Negotiates the API version by default. The client wraps its
	// transport in OpenTelemetry's, which cornus does not export from:
	// filtered out, a request skips it (13 µs of a 170 µs inspect here).
	cli, err := client.New(client.WithHost(host), client.WithHTTPResponseHook(noteEventsAnswer),
		client.WithTraceOptions(otelhttp.WithFilter(func(*http.Request) bool { return false })))
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

// Name returns "dockerhost".
func (b *Backend) Name() string { return Name }

// Host is the daemon address in use.
func (b *Backend) Host() string { return b.host }

// APIVersion is the negotiated Engine API version.
func (b *Backend) APIVersion() string { return b.api }

// Close releases the client's idle connections.
func (b *Backend) Close() error { return b.cli.Close() }

// API versions that gate spec fields.
const (
	apiStartInterval = "1.44" // HealthConfig.StartInterval
	apiSubpath       = "1.45" // VolumeOptions.Subpath
	apiStopSignal    = "1.42" // signal= on stop and restart
)

// Capabilities reports what this daemon honors at the negotiated API
// version.
func (b *Backend) Capabilities() backends.Capabilities {
	c := capabilitiesFor(b.api)
	c.Features = backends.FeaturesOf(b)
	return c
}

func capabilitiesFor(api string) backends.Capabilities {
	gaps := map[string]string{
		"resources.reservations.cpus": "Docker has no CPU reservation",
		"resources.reservations.pids": "Docker has no PID reservation (pids is a limit only)",
		"update":                      backends.GapUpdate,
	}
	if versions.LessThan(api, apiStartInterval) {
		gaps["healthcheck.startInterval"] = "needs Docker API " + apiStartInterval + "+, the daemon speaks " + api
	}
	if versions.LessThan(api, apiSubpath) {
		gaps["volumes.subpath"] = "needs Docker API " + apiSubpath + "+, the daemon speaks " + api
	}
	// dockerd always counts 127.0.0.0/8 among its insecure registries.
	return backends.Capabilities{Gaps: gaps, NativeHealthcheck: true, LoopbackRegistries: true}
}

func (b *Backend) atLeast(api string) bool { return versions.GreaterThanOrEqualTo(b.api, api) }
