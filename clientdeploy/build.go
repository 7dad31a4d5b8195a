package clientdeploy

import (
	"context"
	"errors"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/spec"
)

// BuildPolicy says what up builds, as docker compose's flags do.
type BuildPolicy int

const (
	// BuildMissing builds a service's image when it is missing, and
	// always for pull_policy: build (up's default).
	BuildMissing BuildPolicy = iota
	// BuildAlways builds every image with a build section (up --build).
	BuildAlways
	// BuildNever builds nothing (up --no-build).
	BuildNever
)

// BuildOptions tune builds (compose build's flags, up's build flags).
type BuildOptions struct {
	NoCache bool
	Pull    bool
	Args    map[string]string
}

// Build builds the images of the named services (every service with a
// build section when none is named) where the session's backend keeps
// images.
func (se *Session) Build(ctx context.Context, p spec.Project, services []string, o BuildOptions) ([]builder.Result, error) {
	if se.remote != nil {
		return se.remoteBuild(ctx, p, services, o)
	}
	if se.builder == nil {
		se.builder = builder.New(se.local, se.streams.Environ)
	}
	// The container progress display waits: BuildKit's has the terminal.
	return se.builder.Build(ctx, p, services, builder.Options{
		NoCache: o.NoCache, Pull: o.Pull, Args: o.Args,
		Progress: se.progressMode, Out: se.streams.Err,
		Policy: hostpolicy.FromEnv(se.streams.Environ, se.projectDir),
	})
}

// buildForUp builds what up needs built under policy: the selected
// services (and their dependencies) with a build section whose image is
// missing or whose pull_policy is build, or all of them (BuildAlways).
func (se *Session) buildForUp(ctx context.Context, p spec.Project, o Options) error {
	if o.Build == BuildNever {
		return nil
	}
	names, err := engine.Selected(p, o.Up.Services, o.Up.NoDeps)
	if err != nil {
		return err
	}
	var todo []string
	for _, n := range names {
		a := p.Services[n]
		if a.Build == nil {
			continue
		}
		need, err := se.needsBuild(ctx, a, o.Build)
		if err != nil {
			return err
		}
		if need {
			todo = append(todo, n)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	_, err = se.Build(ctx, p, todo, o.BuildOptions)
	return err
}

func (se *Session) needsBuild(ctx context.Context, a spec.App, policy BuildPolicy) (bool, error) {
	if policy == BuildAlways || a.PullPolicy == spec.PullBuild {
		return true, nil
	}
	if se.remote != nil {
		return se.remoteMissing(ctx, a.Image)
	}
	images, err := backends.Want[backends.Images](se.local, backends.FeatureImages, "images")
	if err != nil {
		return false, nil // the runtime fetches images itself
	}
	_, err = images.InspectImage(ctx, a.Image)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, errdefs.ErrNotFound):
		return true, nil
	}
	return false, err
}
