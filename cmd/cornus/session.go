package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/registry"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// session is an open backend plus an engine over it, for one command.
type session struct {
	backend  backends.Backend
	engine   *engine.Engine
	progress progress.Writer
}

// openSession connects to the backend CORNUS_DEPLOY_BACKEND selects. The
// host policy allows bind mounts under projectDir (the local CLI's default).
func openSession(ctx context.Context, s streams, projectDir, progressMode string) (*session, error) {
	b, err := registry.Open(ctx, s.Environ)
	if err != nil {
		return nil, err
	}
	pw, err := progress.New(progressMode, s.Err, isTerminal(s.Err), "Running")
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	e := engine.New(b,
		engine.WithProgress(pw),
		engine.WithEnviron(s.Environ),
		engine.WithPolicy(hostpolicy.FromEnv(s.Environ, projectDir)),
	)
	return &session{backend: b, engine: e, progress: pw}, nil
}

func (se *session) Close() {
	se.progress.Close()
	_ = se.backend.Close()
}

// printAllWarnings prints the backend's capability gaps for p.
func (se *session) printAllWarnings(w io.Writer, p spec.Project) {
	printWarnings(w, se.engine.Warnings(p))
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// noteEmpty says on stderr when a project has no containers at all, which
// docker compose passes over in silence (a mistyped -p, or a project
// already down): the command still runs and exits 0.
func (se *session) noteEmpty(ctx context.Context, w io.Writer, project string) {
	if cs, err := se.engine.PS(ctx, project, engine.PSOptions{All: true}); err == nil && len(cs) == 0 {
		fmt.Fprintf(w, "no containers for project %s\n", project)
	}
}
