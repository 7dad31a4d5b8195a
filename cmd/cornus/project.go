package main

import (
	"context"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/load"
	"github.com/cornus-dev/cornus/spec"
)

// target is the project a compose command acts on: its name, and its spec
// when the Compose files could be loaded.
type target struct {
	name string
	spec *spec.Project
	dir  string
}

// resolve finds the project for commands that act on what is deployed
// (ps, down, logs, ...): warnings are not repeated, and with -p and no
// loadable Compose file the name alone is enough, as in docker compose.
func (f *composeFlags) resolve(ctx context.Context, s streams) (target, error) {
	r, err := f.loadQuiet(ctx, s)
	if err != nil {
		if f.projectName != "" && len(f.files) == 0 && f.devcontainer == "" {
			return target{name: f.projectName}, nil
		}
		return target{}, err
	}
	return target{name: r.Project.Name, spec: &r.Project, dir: r.Dir}, nil
}

// resolveName finds only the project name, without loading the project
// when the name can be known otherwise: for commands that act on what is
// deployed and need nothing from the Compose files (ps, logs, exec, ...).
func (f *composeFlags) resolveName(ctx context.Context, s streams) (target, error) {
	o, err := f.options(s)
	if err != nil {
		return target{}, err
	}
	if name, err := compose.ProjectName(o); err == nil {
		return target{name: name}, nil
	}
	return f.resolve(ctx, s)
}

// loadQuiet loads without printing warnings.
func (f *composeFlags) loadQuiet(ctx context.Context, s streams) (load.Result, error) {
	o, err := f.options(s)
	if err != nil {
		return load.Result{}, err
	}
	return load.Compose(ctx, o)
}

// openProject resolves the project and opens a backend session for it.
// nameOnly: the command needs only the project's name (see resolveName).
func (f *composeFlags) openProject(ctx context.Context, s streams, nameOnly bool, progressMode string) (target, *clientdeploy.Session, error) {
	resolve := f.resolve
	if nameOnly {
		resolve = f.resolveName
	}
	t, err := resolve(ctx, s)
	if err != nil {
		return target{}, nil, err
	}
	se, err := openSession(ctx, s, f.server, t.dir, progressMode)
	if err != nil {
		return target{}, nil, err
	}
	return t, se, nil
}

// loadAndOpen loads the project and opens a backend session for it (the
// verbs that act on its images: build, pull, push).
func (f *composeFlags) loadAndOpen(ctx context.Context, s streams, progressMode string) (load.Result, *clientdeploy.Session, error) {
	r, err := f.load(ctx, s)
	if err != nil {
		return r, nil, err
	}
	se, err := openSession(ctx, s, f.server, r.Dir, progressMode)
	return r, se, err
}

// progressMode is --progress, or quiet for a verb's -q.
func (f *composeFlags) progressMode(quiet bool) string {
	if quiet {
		return "quiet"
	}
	return f.progress
}

// openSession opens the session of a command (see clientdeploy.Open).
func openSession(ctx context.Context, s streams, server, projectDir, progressMode string) (*clientdeploy.Session, error) {
	return clientdeploy.Open(ctx, s.deploy(), clientdeploy.OpenOptions{Server: server, ProjectDir: projectDir, Progress: progressMode})
}
