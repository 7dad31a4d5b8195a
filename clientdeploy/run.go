package clientdeploy

import (
	"context"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// RunOptions are compose run's, for the session: the engine's, and what
// is built first.
type RunOptions struct {
	engine.RunOptions
	Build        BuildPolicy
	BuildOptions BuildOptions
}

// Run is compose run's workflow: the egress policy applied, the
// service's image (and its dependencies') built as up builds them, on a
// server the images it lacks sent from here, then the one-off container
// run (engine.Run).
func (se *Session) Run(ctx context.Context, p spec.Project, o RunOptions) (engine.RunResult, error) {
	if err := applyEgress(&p, nil, se.streams.Environ); err != nil {
		return engine.RunResult{}, err
	}
	up := Options{Up: engine.UpOptions{Services: []string{o.Service}, NoDeps: o.NoDeps}, Build: o.Build, BuildOptions: o.BuildOptions}
	if err := se.buildForUp(ctx, p, up); err != nil {
		return engine.RunResult{}, err
	}
	if se.remote != nil {
		if err := se.sendImages(ctx, p, up); err != nil {
			return engine.RunResult{}, err
		}
	}
	o.Attaching = se.progress.Close
	res, err := se.engine.Run(ctx, p, o.RunOptions)
	se.progress.Close()
	return res, err
}
