package bare

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
)

// Name is the backend's name in CORNUS_DEPLOY_BACKEND.
const Name = "bare"

// Backend runs containers with an OCI runtime directly, no daemon: the
// daemonless core (records, CNI, monitors, the lifecycle) over the
// runtime's CLI, an in-process image store and snapshotter (driver).
type Backend struct {
	*daemonless.Core
	cfg    config
	rt     *ociRuntime
	images *imageStore
	snap   *snapshotter
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
// plugins), failing fast with what to install, removes what a Create
// that died half-way left and reconciles containers that lost their
// supervision.
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
	b := &Backend{cfg: cfg, rt: rt}
	if b.Core, err = daemonless.New(cfg.Config, driver{b}); err != nil {
		return nil, err
	}
	if b.images, err = openImageStore(cfg.imagesDir()); err != nil {
		return nil, err
	}
	b.snap = &snapshotter{kind: cfg.snapshotter, dir: cfg.layersDir(), content: b.images.content}
	if err := b.Open(ctx, o.monitor, cfg.runtimeRoot(), cfg.layersDir()); err != nil {
		return nil, err
	}
	if o.monitor {
		return b, nil
	}
	// A container that cannot be restarted says why in its record; the
	// command at hand (a down, a ps) goes on.
	_ = b.reconcile(ctx)
	return b, nil
}

// Name is the backend's name, Name.
func (b *Backend) Name() string { return Name }

// Close releases nothing: the backend holds no connection.
func (b *Backend) Close() error { return nil }

// Capabilities reports what the backend supports (the package doc's matrix).
func (b *Backend) Capabilities() backends.Capabilities { return daemonless.Capabilities(b) }

var _ backends.Backend = (*Backend)(nil)
