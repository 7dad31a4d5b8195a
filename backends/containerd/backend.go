package containerd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// Name is the backend's name in CORNUS_DEPLOY_BACKEND.
const Name = "containerd"

// Backend runs containers on containerd.
type Backend struct {
	cfg     config
	cli     *client.Client
	net     *cni.Manager
	vols    *localstore.Volumes
	nets    *localstore.Networks
	records *monitor.Store
}

// Option configures New.
type Option func(*options)

type options struct {
	environ []string
	// monitor: a monitor opening the backend. It sweeps no half-made
	// containers: its CLI did, and a monitor starting after its CLI was
	// killed would hold a half-made container's lock while it sweeps, so
	// the next CLI skipped it and collided with its port or address.
	monitor bool
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
	net, err := cni.New(cfg.dataDir, cni.WithEnv(o.environ))
	if err != nil {
		return nil, err
	}
	if err := net.Check(); err != nil {
		return nil, fmt.Errorf("containerd backend: %w (apt-get install containernetworking-plugins iptables, or set %s)", err, EnvCNIBinDir)
	}
	cli, err := client.New(cfg.address, client.WithDefaultNamespace(cfg.namespace), client.WithTimeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("containerd at %s unreachable: %v (start it, e.g. scripts/containerd.sh, or set %s): %w", cfg.address, err, EnvAddress, errdefs.ErrUnavailable)
	}
	b := &Backend{cfg: cfg, cli: cli, net: net, records: monitor.NewStore(cfg.recordsDir()),
		nets: localstore.NewNetworks(net, filepath.Join(cfg.dataDir, "networks"), Name)}
	b.vols = localstore.NewVolumes(cfg.volumesDir(), Name, b.volumeUser)
	if _, err := cli.Version(b.ns(ctx)); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("containerd at %s unreachable: %v (start it, e.g. scripts/containerd.sh, or set %s): %w", cfg.address, err, EnvAddress, errdefs.ErrUnavailable)
	}
	for _, d := range []string{cfg.recordsDir(), cfg.volumesDir(), cfg.runcRoot(), cfg.fifoDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			_ = cli.Close()
			return nil, fmt.Errorf("containerd backend: %w", err)
		}
	}
	if o.monitor {
		return b, nil
	}
	if err := b.removeHalfMade(ctx); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("containerd backend: %w", err)
	}
	return b, nil
}

// ns scopes ctx to the backend's containerd namespace.
func (b *Backend) ns(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, b.cfg.namespace)
}

func (b *Backend) Name() string { return Name }

func (b *Backend) Close() error { return b.cli.Close() }

// Capabilities: see the package doc's matrix.
func (b *Backend) Capabilities() backends.Capabilities {
	return backends.Capabilities{
		Gaps: map[string]string{
			"logging": "output goes to the monitor's JSON-lines log; no log drivers",
			"update":  backends.GapUpdate,
		},
		Features:           backends.FeaturesOf(b),
		NativeHealthcheck:  true, // the monitor runs them
		LoopbackRegistries: true, // plainHTTP
	}
}

// RemoteMode reports whether EnvRemote turned remote mode on.
func (b *Backend) RemoteMode() (bool, string) { return b.cfg.remote, EnvRemote }

var _ backends.Backend = (*Backend)(nil)
