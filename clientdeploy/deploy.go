package clientdeploy

import (
	"context"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// Hold says who holds a server deployment's session, whose end removes
// it. A local deployment has none: only HoldNone's refusals apply there.
type Hold int

const (
	// HoldForeground means this process holds the session while the
	// command runs (compose up, deploy).
	HoldForeground Hold = iota
	// HoldAgent means a detached `cornus session-agent` holds it,
	// serving the client-local mounts and client routes (compose up -d).
	HoldAgent
	// HoldNone means nobody does and the deployment outlives its client
	// (deploy --detach), so client routes and local mounts are refused.
	HoldNone
)

// Options are what differs between the commands that deploy.
type Options struct {
	// Up are the engine's options.
	Up engine.UpOptions
	// Egress, when set, replaces every app's egress policy (deploy's
	// --egress flags; nil: the spec's own).
	Egress *EgressFlags
	// LocalMounts are --local-mount values ([SERVICE=]SRC:DST[:ro]),
	// relative to Dir; they need a server.
	LocalMounts []string
	// Credentials are --credential values
	// ([SERVICE/]NAME[@aws]=KIND:VALUE), added to the apps' credentials.
	Credentials []string
	Dir         string
	// BindsToLocal: on a server, the project's bind mounts become
	// client-local mounts, and a line says so for each (compose up).
	BindsToLocal bool
	// Hold says who holds a server deployment's session.
	Hold Hold
	// Build says what is built before up; BuildOptions how.
	Build        BuildPolicy
	BuildOptions BuildOptions
}

// Deploy is the client's deploy workflow: it applies the egress policy
// and the client's proxy variables, refuses what cannot work (client
// routes or local mounts nobody would serve) before anything is created,
// prepares the client-local mounts, prints the backend's warnings, holds
// the session on a server (this process or an agent, per o.Hold) and
// runs Up. It ends the progress display before it returns.
func (se *Session) Deploy(ctx context.Context, p spec.Project, o Options) (engine.UpResult, error) {
	p, exp, err := se.prepare(p, o)
	if err != nil {
		return engine.UpResult{}, err
	}
	se.printWarnings(p)
	if err := se.buildForUp(ctx, p, o); err != nil {
		return engine.UpResult{}, err
	}
	if se.remote != nil {
		if err := se.sendImages(ctx, p, o); err != nil {
			return engine.UpResult{}, err
		}
	}
	if se.remote != nil && o.Hold != HoldNone {
		// The deployment lives as long as its session: this process's in
		// the foreground, an agent's in the background.
		if err := se.hold(ctx, p.Name, o.Hold == HoldAgent, egressBlocks(p), credentialsOf(p), exp); err != nil {
			return engine.UpResult{}, err
		}
	}
	res, err := se.engine.Up(ctx, p, o.Up)
	se.progress.Close()
	return res, err
}

// prepare is p as it deploys (egress applied, bind mounts made
// client-local) and the exports its session serves, or the refusal.
func (se *Session) prepare(p spec.Project, o Options) (spec.Project, *client.Exports, error) {
	if err := applyEgress(&p, o.Egress, se.streams.Environ); err != nil {
		return p, nil, err
	}
	if err := applyCredentials(&p, o.Credentials, o.Dir); err != nil {
		return p, nil, err
	}
	if se.remote == nil {
		if err := refuseLocalRoles(p); err != nil {
			return p, nil, err
		}
	}
	if o.Hold == HoldNone {
		if err := refuseDetachedClientRoutes(p); err != nil {
			return p, nil, err
		}
	}
	lms, err := parseLocalMounts(o.LocalMounts, o.Dir)
	if err != nil {
		return p, nil, err
	}
	if se.remote != nil && o.BindsToLocal {
		// Bind mounts of this machine's files become client-local
		// mounts, served by whoever holds the session.
		var binds []client.LocalMount
		if p, binds, err = se.bindsToLocal(p); err != nil {
			return p, nil, err
		}
		lms = append(lms, binds...)
	}
	exp, err := se.localExports(p, lms, o.Hold == HoldNone)
	return p, exp, err
}
