package incus

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// Name is the backend's name in the registry and in warnings.
const Name = "incus"

// extOCI is the API extension of Incus 6.3+ that runs OCI images from a
// registry itself.
const extOCI = "instance_oci"

// Backend runs containers as Incus application containers through the
// Incus REST API on its unix socket.
type Backend struct {
	cfg     config
	cli     *client
	records *monitor.Store // host side of every container's record directory

	infoOnce sync.Once
	info     *server
	infoErr  error

	binOnce sync.Once
	bin     string // the init binary's file name in cfg.binDir()
	binErr  error

	poolOnce sync.Once
	pool     string
	poolErr  error

	// ensureMu serialises network and volume creation and address
	// allocation within this process; a file lock covers other processes.
	ensureMu sync.Mutex
}

// New connects to incusd on CORNUS_INCUS_SOCKET. It fails (Unavailable)
// when incusd does not answer, naming the socket and how to start it.
func New(ctx context.Context, opts ...Option) (*Backend, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	cfg, err := configFrom(o.environ)
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, cli: newClient(cfg.socket, cfg.project), records: monitor.NewStore(cfg.recordsDir())}
	if _, err := b.server(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// Name returns "incus".
func (b *Backend) Name() string { return Name }

// Close releases idle connections.
func (b *Backend) Close() error {
	b.cli.http.CloseIdleConnections()
	b.cli.ws.CloseIdleConnections()
	return nil
}

// server returns GET /1.0, asked once.
func (b *Backend) server(ctx context.Context) (*server, error) {
	b.infoOnce.Do(func() {
		var s server
		if err := b.cli.call(ctx, request{method: "GET", path: "/1.0"}, &s); err != nil {
			b.infoErr = fmt.Errorf("incus: %w", err)
			return
		}
		b.info = &s
	})
	return b.info, b.infoErr
}

// ociMode reports whether incusd runs OCI images itself (Incus >= 6.3).
func (b *Backend) ociMode() bool {
	return b.info != nil && slices.Contains(b.info.APIExtensions, extOCI)
}

// Capabilities reports what the backend supports (the package doc's matrix).
func (b *Backend) Capabilities() backends.Capabilities {
	c := capabilitiesFor(b.ociMode())
	c.Features = backends.FeaturesOf(b)
	return c
}

func capabilitiesFor(oci bool) backends.Capabilities {
	gaps := map[string]string{
		"egress":                 "egress policy needs the caretaker companion, a later release",
		"logging":                "output goes to cornus's JSON-lines log in the container's record directory; no log drivers",
		"update":                 backends.GapUpdate,
		"deviceCgroupRules":      "an unprivileged Incus container cannot create device nodes (mknod is refused in its user namespace); use devices",
		"networkMode=host":       "an Incus container always has a network namespace of its own (LXC refuses to keep the host's)",
		"networkMode=container":  "an Incus container always has a network namespace of its own (LXC cannot join another container's)",
		"networkMode=service":    "an Incus container always has a network namespace of its own (LXC cannot join another container's)",
		"pidMode":                "an Incus container always has a pid namespace of its own (LXC refuses to keep the host's)",
		"ipcMode":                "an Incus container always has an IPC namespace of its own (LXC refuses to keep the host's)",
		"utsMode":                "an Incus container always has a UTS namespace of its own (LXC refuses to keep the host's)",
		"usernsMode":             "an unprivileged Incus container always has a user namespace of its own (privileged: true gives a container the host's)",
		"cgroupnsMode":           "an Incus container always has a cgroup namespace of its own",
		"resources.reservations": "Incus has limits only, no reservations",
	}
	if !oci {
		return backends.Capabilities{Gaps: gaps, NativeHealthcheck: true}
	}
	// The OCI path runs no cornus init: healthchecks by the engine's exec
	// prober; attach and copy answer NotImplemented naming the way round
	// (the interfaces are the type's, so the features stay declared).
	maps.Copy(gaps, ociGaps)
	return backends.Capabilities{Gaps: gaps, NativeHealthcheck: false}
}

var _ backends.Backend = (*Backend)(nil)
