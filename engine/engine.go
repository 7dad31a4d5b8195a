package engine

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/hostlock"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// Engine orchestrates one backend.
type Engine struct {
	b        backends.Backend
	caps     backends.Capabilities
	progress progress.Writer
	environ  map[string]string
	policy   hostpolicy.Policy
	lockDir  string
	// noHostFiles refuses secrets and configs read from this host's files
	// or environment (cornus serve: specs come from tenants).
	noHostFiles bool

	companions Companions

	mu     sync.Mutex
	health map[string]*healthMonitor // engine-run healthchecks by container ID
}

type config struct {
	progress   progress.Writer
	environ    []string
	policy     *hostpolicy.Policy
	lockDir    string
	companions Companions
	noHost     bool
}

// Option configures an Engine. Options do no I/O.
type Option func(*config)

// WithProgress sends resource events to w (default: discarded).
func WithProgress(w progress.Writer) Option { return func(c *config) { c.progress = w } }

// WithEnviron supplies KEY=VALUE pairs: values of environment-sourced
// secrets not captured at load time, and the default host policy.
func WithEnviron(env []string) Option { return func(c *config) { c.environ = env } }

// WithPolicy sets the host policy (default: hostpolicy.FromEnv of the
// environ, with no project directory).
func WithPolicy(p hostpolicy.Policy) Option { return func(c *config) { c.policy = &p } }

// WithLockDir sets where per-project lock files live (default: one fixed
// place per user, /run/cornus/locks for root, else
// $XDG_RUNTIME_DIR/cornus/locks, else /tmp/cornus-UID/locks; never
// $TMPDIR, which would let two runs miss each other's locks).
func WithLockDir(dir string) Option { return func(c *config) { c.lockDir = dir } }

// WithoutHostFiles makes secrets and configs that name a file or an
// environment variable of this host an error: their content must come
// in the spec (a server applying other people's specs).
func WithoutHostFiles() Option { return func(c *config) { c.noHost = true } }

// New returns an Engine for b.
func New(b backends.Backend, opts ...Option) *Engine {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.progress == nil {
		c.progress = progress.Discard
	}
	if c.lockDir == "" {
		c.lockDir = hostlock.DefaultDir(c.environ, os.Geteuid())
	}
	policy := hostpolicy.FromEnv(c.environ, "")
	if c.policy != nil {
		policy = *c.policy
	}
	return &Engine{
		b: b, caps: b.Capabilities(), progress: c.progress, environ: environMap(c.environ),
		policy: policy, lockDir: c.lockDir, health: map[string]*healthMonitor{}, companions: c.companions,
		noHostFiles: c.noHost,
	}
}

// Backend returns the backend the engine drives.
func (e *Engine) Backend() backends.Backend { return e.b }

// Warnings lists, for every app, the fields this backend cannot honor.
func (e *Engine) Warnings(p spec.Project) []spec.Warning {
	var out []spec.Warning
	for _, name := range p.ServiceNames() {
		out = append(out, backends.Unhonored(e.b.Name(), e.caps, p.Services[name])...)
		out = append(out, e.pullWarnings(p.Services[name])...)
	}
	return out
}

// checkSpec runs the host policy on what a verb that creates nothing
// (start, stop, restart, kill, rm, down) takes from the spec it was
// handed: its hooks. nil is nothing to check.
func (e *Engine) checkSpec(p *spec.Project) error {
	if p == nil {
		return nil
	}
	return e.policy.CheckHooks(*p)
}

// progressOf is where work under ctx reports: the writer ctx carries
// (progress.WithWriter), else the engine's own.
func (e *Engine) progressOf(ctx context.Context) progress.Writer {
	return progress.From(ctx, e.progress)
}

// environMap is KEY=VALUE pairs by key.
func environMap(environ []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}
