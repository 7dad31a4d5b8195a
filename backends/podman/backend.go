package podman

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Name is the backend's name in the registry and in warnings.
const Name = "podman"

// Backend runs containers on one Podman service through the libpod API.
type Backend struct {
	cfg config
	cli *client
	svc *service // the supervised service in CORNUS_PODMAN_SERVICE=1 mode

	infoMu    sync.Mutex
	info      *hostInfo // nil until podman answered once
	infoTried time.Time // last failed attempt, to not retry on every call

	ulimitsMu sync.Mutex
	ulimits   []backends.Ulimit // the service's default ulimits, once learned

	// ensureMu serialises EnsureNetwork/EnsureVolume within this process;
	// podman's own name uniqueness covers other processes.
	ensureMu sync.Mutex
}

// New opens the endpoint the environment selects (see config.go). A named
// socket that does not answer is no error here: calls fail with "podman at
// X unreachable" until it does. In service mode New starts the service and
// waits for it; a service that cannot start is an error.
func New(ctx context.Context, opts ...Option) (*Backend, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	cfg, err := configFrom(o.environ)
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg}
	if cfg.service {
		if b.svc, err = startService(ctx, cfg); err != nil {
			return nil, err
		}
		b.cli = newClient(b.svc.endpoint)
	} else {
		ep := *cfg.endpoint
		b.cli = newClient(func() endpoint { return ep })
	}
	// Learn the daemon's facts now if it answers; later calls retry.
	ictx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, _ = b.hostInfo(ictx)
	return b, nil
}

// Name returns "podman".
func (b *Backend) Name() string { return Name }

// Endpoint is the API endpoint in use, e.g. unix:///run/podman/podman.sock.
func (b *Backend) Endpoint() string { return b.cli.ep().String() }

// Ping checks that podman answers; the error is Unavailable when it does not.
func (b *Backend) Ping(ctx context.Context) error {
	err := b.cli.call(ctx, request{method: "GET", path: "/_ping"}, nil)
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// Rootless reports whether the service runs rootless, as podman itself
// says (GET /libpod/info: host.security.rootless), never guessed from the
// socket path.
func (b *Backend) Rootless(ctx context.Context) (bool, error) {
	info, err := b.hostInfo(ctx)
	if err != nil {
		return false, err
	}
	return info.Host.Security.Rootless, nil
}

// CheckHostReach refuses features that reach the container's network from
// the host (port-forward, tunnel) on a rootless service, whose containers
// live in a network namespace of their own user's. In remote mode
// (RemoteMode) `cornus serve` never reaches them from the host: each
// replica's companion dials next to the app.
func (b *Backend) CheckHostReach(ctx context.Context, what string) error {
	rootless, err := b.Rootless(ctx)
	if err != nil || !rootless {
		return err
	}
	return fmt.Errorf("%s: the podman service at %s runs rootless, so its container networks are not reachable from this host's namespace; "+
		"run a rootful service, or serve it with `cornus serve` in remote mode (%s=1), whose companions dial next to the app: %w",
		what, b.Endpoint(), EnvRemote, errdefs.ErrFailedPrecondition)
}

// Close stops the supervised service (service mode) and releases idle
// connections.
func (b *Backend) Close() error {
	b.cli.http.CloseIdleConnections()
	if b.svc != nil {
		return b.svc.stop()
	}
	return nil
}

// Capabilities reports what the backend supports (the package doc's
// matrix). What depends on the daemon (who schedules healthchecks, rootless
// limits) is read from its info once it answered.
func (b *Backend) Capabilities() backends.Capabilities {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, _ := b.hostInfo(ctx)
	c := capabilitiesFor(info)
	c.Features = backends.FeaturesOf(b)
	return c
}

func capabilitiesFor(info *hostInfo) backends.Capabilities {
	gaps := map[string]string{
		"resources.reservations.cpus": "podman has no CPU reservation",
		"resources.reservations.pids": "podman has no PID reservation (pids is a limit only)",
		"logging.options":             "podman honors only max-size (the log file's size cap) and a journald tag; max-file and other options are ignored",
		"update":                      backends.GapUpdate,
	}
	if info != nil && info.schedulesHealthchecks() {
		// podman's systemd timers probe at the interval only; elsewhere
		// cornus's driver probes, at the start interval too.
		gaps["healthcheck.startInterval"] = "podman 4's healthchecks have no start interval"
	}
	if info != nil && info.Host.Security.Rootless {
		// What a user namespace of an unprivileged user cannot do (measured
		// with podman 4.3 rootless, runc, cgroup v1).
		gaps["usernsMode"] = "a rootless podman's containers always live in its user's namespace, never the host's"
		gaps["deviceCgroupRules"] = "a rootless podman cannot create device nodes"
		gaps["domainname"] = "a rootless podman cannot set the domain name (podman sets it as a sysctl, which the user namespace may not write)"
		if info.Host.CgroupVersion == "v1" {
			gaps["resources.limits"] = "a rootless podman cannot set cgroup limits on cgroup v1"
		}
	}
	return backends.Capabilities{Gaps: gaps, NativeHealthcheck: true, LoopbackRegistries: true}
}

// hostInfo returns the daemon's info, fetched once (or kept from an
// earlier command: infocache.go); a failure is retried at most every few
// seconds.
func (b *Backend) hostInfo(ctx context.Context) (*hostInfo, error) {
	b.infoMu.Lock()
	defer b.infoMu.Unlock()
	if b.info != nil {
		return b.info, nil
	}
	if info, ok := b.cachedInfo(); ok {
		b.info = info
		return b.info, nil
	}
	if time.Since(b.infoTried) < 5*time.Second {
		return nil, fmt.Errorf("podman at %s: info not available yet: %w", b.Endpoint(), errdefs.ErrUnavailable)
	}
	var info hostInfo
	if err := b.cli.call(ctx, request{method: "GET", path: "/info"}, &info); err != nil {
		b.infoTried = time.Now()
		return nil, fmt.Errorf("podman info: %w", err)
	}
	b.info = &info
	b.keepInfo(info)
	return b.info, nil
}

var _ backends.Backend = (*Backend)(nil)
