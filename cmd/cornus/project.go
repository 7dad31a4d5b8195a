package main

import (
	"context"

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

// loadQuiet loads without printing warnings.
func (f *composeFlags) loadQuiet(ctx context.Context, s streams) (load.Result, error) {
	o, err := f.options(s)
	if err != nil {
		return load.Result{}, err
	}
	return load.Compose(ctx, o)
}
