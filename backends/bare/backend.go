package bare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// Name is the backend's name in CORNUS_DEPLOY_BACKEND.
const Name = "bare"

// Backend runs containers with an OCI runtime directly: no daemon.
type Backend struct {
	cfg     config
	rt      *ociRuntime
	net     *cni.Manager
	vols    *localstore.Volumes
	nets    *localstore.Networks
	records *monitor.Store
	images  *imageStore
	snap    *snapshotter
}

// Option configures New.
type Option func(*options)

type options struct {
	environ []string
	monitor bool // a monitor opening the backend: no checks or sweeps (its CLI did them)
}

// WithEnviron supplies the environment (KEY=VALUE) the backend reads its
// settings from, and that its monitors inherit.
func WithEnviron(env []string) Option { return func(o *options) { o.environ = env } }

// New checks what the backend needs (root, the OCI runtime, the CNI
// plugins), failing fast with what to install, and removes what a Create
// that died half-way left.
func New(ctx context.Context, opts ...Option) (*Backend, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := configFrom(o.environ)
	if err != nil {
		return nil, err
	}
	rt, err := newRuntime(cfg.runtime, cfg.runtimeRoot(), !o.monitor)
	if err != nil {
		return nil, err
	}
	net, err := cni.New(cfg.dataDir, cni.WithEnv(o.environ))
	if err != nil {
		return nil, err
	}
	if err := net.Check(); err != nil {
		return nil, fmt.Errorf("bare backend: %w (apt-get install containernetworking-plugins iptables, or set %s)", err, EnvCNIBinDir)
	}
	imgs, err := openImageStore(cfg.imagesDir())
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, rt: rt, net: net, records: monitor.NewStore(cfg.recordsDir()), images: imgs,
		snap: &snapshotter{kind: cfg.snapshotter, dir: cfg.layersDir(), content: imgs.content}}
	b.nets = localstore.NewNetworks(net, filepath.Join(cfg.dataDir, "networks"), Name)
	b.vols = localstore.NewVolumes(cfg.volumesDir(), Name, b.volumeUser)
	for _, d := range []string{cfg.recordsDir(), cfg.volumesDir(), cfg.runtimeRoot(), cfg.layersDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("bare backend: %w", err)
		}
	}
	if o.monitor {
		return b, nil
	}
	if err := b.removeHalfMade(ctx); err != nil {
		return nil, fmt.Errorf("bare backend: %w", err)
	}
	// A container that cannot be restarted says why in its record; the
	// command at hand (a down, a ps) goes on.
	_ = b.reconcile(ctx)
	return b, nil
}

func (b *Backend) Name() string { return Name }

// Close releases nothing: the backend holds no connection.
func (b *Backend) Close() error { return nil }

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

func now() time.Time { return time.Now().UTC() }

var _ backends.Backend = (*Backend)(nil)
