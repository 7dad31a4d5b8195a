package containerd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
)

// Name is the backend's name in CORNUS_DEPLOY_BACKEND.
const Name = "containerd"

// Backend runs containers on containerd: the daemonless core (records,
// CNI, monitors, the lifecycle) over containerd's containers and tasks
// (driver).
type Backend struct {
	*daemonless.Core
	cfg config
	cli *client.Client

	contentRoot     string // containerd's content store on this host, when readable (registrystore.go)
	contentRootOnce sync.Once
}

// Option configures New.
type Option func(*options)

type options struct {
	environ []string
	monitor bool // a monitor opening the backend: no sweep (daemonless.Core.Open)
}

// WithEnviron supplies the environment (KEY=VALUE) the backend reads its
// settings from, and that its monitors inherit.
func WithEnviron(env []string) Option { return func(o *options) { o.environ = env } }

// New connects to containerd and checks what the backend needs (root, the
// CNI plugins), failing fast with what to install or start.
func New(ctx context.Context, opts ...Option) (*Backend, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := configFrom(o.environ)
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg}
	if b.Core, err = daemonless.New(cfg.Config, driver{b}); err != nil {
		return nil, err
	}
	cli, err := client.New(cfg.address, client.WithDefaultNamespace(cfg.namespace), client.WithTimeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("containerd at %s unreachable: %v (start it, e.g. scripts/containerd.sh, or set %s): %w", cfg.address, err, EnvAddress, errdefs.ErrUnavailable)
	}
	b.cli = cli
	if _, err := cli.Version(b.ns(ctx)); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("containerd at %s unreachable: %v (start it, e.g. scripts/containerd.sh, or set %s): %w", cfg.address, err, EnvAddress, errdefs.ErrUnavailable)
	}
	if err := b.Open(ctx, o.monitor, cfg.runcRoot(), cfg.fifoDir()); err != nil {
		_ = cli.Close()
		return nil, err
	}
	return b, nil
}

// ns scopes ctx to the backend's containerd namespace.
func (b *Backend) ns(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, b.cfg.namespace)
}

// Name is the backend's name, Name.
func (b *Backend) Name() string { return Name }

// Close closes the connection to containerd.
func (b *Backend) Close() error { return b.cli.Close() }

// Capabilities reports what the backend supports (the package doc's matrix).
func (b *Backend) Capabilities() backends.Capabilities { return daemonless.Capabilities(b) }

// RemoteMode reports whether EnvRemote turned remote mode on.
func (b *Backend) RemoteMode() (bool, string) { return b.cfg.remote, EnvRemote }

var _ backends.Backend = (*Backend)(nil)
