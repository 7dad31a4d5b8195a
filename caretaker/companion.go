package caretaker

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// Companions gives replicas whose egress needs it (proxy and transparent
// modes) a caretaker companion, for the engine.
type Companions struct {
	Backend backends.Backend
	Environ []string
	// Server is the URL companions dial back to; empty for a local
	// deployment (relayed routes are then refused by the caretaker).
	Server string
	// ServerCA is the PEM of the server's CA, if companions need it.
	ServerCA string

	once  sync.Once
	image string
	err   error
}

type tokenKey struct{}

// WithToken carries the caretaker token of the deployment being applied
// (the server mints one per up) to the companions it creates.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// ReadyCommand is what the engine runs in a companion until it exits 0.
var ReadyCommand = []string{AgentBinary, "caretaker", "ready"}

// Attach implements engine.Companions.
func (c *Companions) Attach(ctx context.Context, p spec.Project, a spec.App, replica int) (engine.Attachment, bool, error) {
	if !NeedsCompanion(a) {
		return engine.Attachment{}, false, nil
	}
	if _, gap := c.Backend.Capabilities().Gap("egress"); gap {
		return engine.Attachment{}, false, nil // a declared gap, warned: the app runs without
	}
	c.once.Do(func() { c.image, c.err = EnsureAgentImage(ctx, c.Backend, c.Environ) })
	if c.err != nil {
		return engine.Attachment{}, false, fmt.Errorf("services.%s.egress (mode %s) needs the caretaker companion: %w", a.Name, a.Egress.Mode, c.err)
	}
	cfg := Config{Project: p.Name, Service: a.Name, Replica: replica, Server: c.Server, ServerCA: c.ServerCA, Egress: a.Egress}
	env := map[string]string{EnvConfig: cfg.Encode()}
	if tok, _ := ctx.Value(tokenKey{}).(string); tok != "" && c.Server != "" {
		env[EnvToken] = tok
	}
	comp := spec.App{
		Name: a.Name + "-caretaker", Image: c.image, PullPolicy: "never", Restart: a.Restart, Env: env,
		Labels: map[string]string{}, StopSignal: "SIGTERM",
	}
	if a.Egress.Mode == spec.EgressTransparent {
		// Its redirect and its marked sockets, in the namespace it owns.
		comp.CapAdd = []string{"NET_ADMIN"}
	}
	att := engine.Attachment{Companion: comp, Ready: ReadyCommand}
	if a.Egress.Mode == spec.EgressProxy {
		att.AppEnv = ProxyEnv()
	}
	return att, true, nil
}

// Ready reports whether the caretaker in this container is ready.
func Ready() error {
	if _, err := os.Stat(ReadyFile); err != nil {
		return fmt.Errorf("caretaker not ready")
	}
	return nil
}
