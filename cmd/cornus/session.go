package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// projectEngine is what the compose verbs need: the local engine, or a
// cornus server's deploy API (server/client.Projects).
type projectEngine interface {
	Up(ctx context.Context, p spec.Project, o engine.UpOptions) (engine.UpResult, error)
	Down(ctx context.Context, project string, o engine.DownOptions) error
	PS(ctx context.Context, project string, o engine.PSOptions) ([]backends.Container, error)
	Logs(ctx context.Context, project string, o engine.LogsOptions) error
	Attach(ctx context.Context, project string, o engine.AttachOptions) error
	Exec(ctx context.Context, project string, o engine.ExecOptions) (int, error)
	Start(ctx context.Context, project string, o engine.LifecycleOptions) error
	Stop(ctx context.Context, project string, o engine.LifecycleOptions) error
	Restart(ctx context.Context, project string, o engine.LifecycleOptions) error
	Kill(ctx context.Context, project string, o engine.LifecycleOptions) error
	Remove(ctx context.Context, project string, o engine.LifecycleOptions) ([]backends.Container, error)
	Port(ctx context.Context, project, service string, port int, proto string, index int) (string, error)
	Top(ctx context.Context, project string, services []string) (map[string]backends.Processes, error)
	Images(ctx context.Context, project string, services []string) ([]engine.ImageUse, error)
	Warnings(p spec.Project) []spec.Warning
}

// imageStore loads and lists images: the local backend's, or a server's.
type imageStore interface {
	LoadImage(ctx context.Context, tar io.Reader) ([]string, error)
	ListImages(ctx context.Context) ([]backends.Image, error)
}

// session is an engine (local or a server's) for one command.
type session struct {
	engine   projectEngine
	progress progress.Writer
	// local is the backend when the engine is local.
	local backends.Backend
	// remote is the server connection when --server is set.
	remote *remoteSession
	// egress are the policies of the deployment, whose client routes the
	// session holder serves.
	egress map[string]*spec.Egress
}

// openSession connects to the server --server/CORNUS_SERVER names, else
// to the backend CORNUS_DEPLOY_BACKEND selects. Locally the host policy
// allows bind mounts under projectDir (the local CLI's default).
func openSession(ctx context.Context, s streams, server, projectDir, progressMode string) (*session, error) {
	pw, err := progress.New(progressMode, s.Err, isTerminal(s.Err), "Running")
	if err != nil {
		return nil, err
	}
	if url := serverURL(server, s.Environ); url != "" {
		r, err := openRemote(ctx, s, url, pw)
		if err != nil {
			pw.Close()
			return nil, err
		}
		return &session{engine: r.projects, progress: pw, remote: r}, nil
	}
	b, err := fromenv.Open(ctx, s.Environ)
	if err != nil {
		pw.Close()
		return nil, err
	}
	e := engine.New(b,
		engine.WithProgress(pw),
		engine.WithEnviron(s.Environ),
		engine.WithPolicy(hostpolicy.FromEnv(s.Environ, projectDir)),
		engine.WithCompanions(&caretaker.Companions{Backend: b, Environ: s.Environ}),
	)
	return &session{engine: e, progress: pw, local: b}, nil
}

func (se *session) Close() {
	se.progress.Close()
	if se.local != nil {
		_ = se.local.Close()
	}
	if se.remote != nil {
		se.remote.Close()
	}
}

// images is where images are loaded and listed.
func (se *session) images(what string) (imageStore, error) {
	if se.remote != nil {
		return se.remote.client, nil
	}
	return backends.Want[backends.Images](se.local, backends.FeatureImages, what)
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
