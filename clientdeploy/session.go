package clientdeploy

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// Engine is what the compose verbs need: the local engine, or a cornus
// server's deploy API (server/client.Projects).
type Engine interface {
	Up(ctx context.Context, p spec.Project, o engine.UpOptions) (engine.UpResult, error)
	Down(ctx context.Context, project string, o engine.DownOptions) error
	PS(ctx context.Context, project string, o engine.PSOptions) ([]backends.Container, error)
	Logs(ctx context.Context, project string, o engine.LogsOptions) error
	Attach(ctx context.Context, project string, o engine.AttachOptions) error
	Exec(ctx context.Context, project string, o engine.ExecOptions) (int, error)
	Run(ctx context.Context, p spec.Project, o engine.RunOptions) (engine.RunResult, error)
	Start(ctx context.Context, project string, o engine.LifecycleOptions) error
	Stop(ctx context.Context, project string, o engine.LifecycleOptions) error
	Restart(ctx context.Context, project string, o engine.LifecycleOptions) error
	Kill(ctx context.Context, project string, o engine.LifecycleOptions) error
	Pause(ctx context.Context, project string, o engine.LifecycleOptions) error
	Unpause(ctx context.Context, project string, o engine.LifecycleOptions) error
	Remove(ctx context.Context, project string, o engine.LifecycleOptions) ([]backends.Container, error)
	Port(ctx context.Context, project, service string, port int, proto string, index int) (string, error)
	Top(ctx context.Context, project string, services []string) (map[string]backends.Processes, error)
	Images(ctx context.Context, project string, services []string) ([]engine.ImageUse, error)
	Projects(ctx context.Context, all bool) ([]engine.ProjectStatus, error)
	Events(ctx context.Context, project string, o engine.EventsOptions, fn func(backends.Event)) error
	WaitExit(ctx context.Context, project string, services []string) (int, error)
	Stats(ctx context.Context, project string, services []string, all bool) ([]engine.StatsSample, error)
	AttachService(ctx context.Context, project string, o engine.AttachServiceOptions) (int, error)
	CopyFrom(ctx context.Context, project string, o engine.CopyOptions, path string) (io.ReadCloser, backends.PathStat, error)
	StatPath(ctx context.Context, project string, o engine.CopyOptions, path string) (backends.PathStat, error)
	CopyTo(ctx context.Context, project string, o engine.CopyOptions, dir string, open func() (io.ReadCloser, error)) error
	Export(ctx context.Context, project string, o engine.CopyOptions) (io.ReadCloser, error)
	Commit(ctx context.Context, project string, o engine.CopyOptions, c backends.CommitOptions) (string, error)
	Volumes(ctx context.Context, project string) ([]backends.Volume, error)
	Pull(ctx context.Context, p spec.Project, o engine.PullOptions) error
	Push(ctx context.Context, p spec.Project, o engine.PushOptions) error
	Warnings(p spec.Project) []spec.Warning
}

// ImageStore loads and lists images: the local backend's, or a server's.
type ImageStore interface {
	LoadImage(ctx context.Context, tar io.Reader) ([]string, error)
	ListImages(ctx context.Context) ([]backends.Image, error)
}

// Streams are what the workflow takes from the command's process: its
// output streams and environment (KEY=VALUE).
type Streams struct {
	Out     io.Writer
	Err     io.Writer
	Environ []string
}

// OpenOptions say where a session goes.
type OpenOptions struct {
	// Server is --server ("": $CORNUS_SERVER, else the local backend).
	Server string
	// ProjectDir is where the local host policy allows bind mounts.
	ProjectDir string
	// Progress is the progress mode: auto, tty, plain, json or quiet.
	Progress string
}

// Session is an engine (local or a server's) for one command.
type Session struct {
	streams  Streams
	engine   Engine
	progress progress.Writer
	// local is the backend when the engine is local.
	local backends.Backend
	// remote is the server connection when a server is named.
	remote *remote
	// builder builds images for the local backend, once asked to.
	builder      *builder.Builder
	progressMode string
	projectDir   string
}

// Open connects to the server o.Server or $CORNUS_SERVER names, else to
// the backend CORNUS_DEPLOY_BACKEND selects. Locally the host policy
// allows bind mounts under o.ProjectDir (the local CLI's default).
func Open(ctx context.Context, s Streams, o OpenOptions) (*Session, error) {
	pw, err := progress.New(o.Progress, s.Err, isTerminal(s.Err), "Running")
	if err != nil {
		return nil, err
	}
	if url := ServerURL(o.Server, s.Environ); url != "" {
		r, err := openRemote(s, url, pw)
		if err != nil {
			pw.Close()
			return nil, err
		}
		return &Session{streams: s, engine: r.projects, progress: pw, remote: r, progressMode: o.Progress, projectDir: o.ProjectDir}, nil
	}
	b, err := fromenv.Open(ctx, s.Environ)
	if err != nil {
		pw.Close()
		return nil, err
	}
	e := engine.New(b,
		engine.WithProgress(pw),
		engine.WithEnviron(s.Environ),
		engine.WithPolicy(hostpolicy.FromEnv(s.Environ, o.ProjectDir)),
		companions(b, s.Environ),
	)
	return &Session{streams: s, engine: e, progress: pw, local: b, progressMode: o.Progress, projectDir: o.ProjectDir}, nil
}

// Close ends the progress display, the backend connection and the
// session this process holds (if any).
func (se *Session) Close() {
	se.progress.Close()
	if se.builder != nil {
		_ = se.builder.Close()
	}
	if se.local != nil {
		_ = se.local.Close()
	}
	if se.remote != nil {
		se.remote.Close()
	}
}

// Engine is the session's engine.
func (se *Session) Engine() Engine { return se.engine }

// Server is the server's URL ("": the engine is local).
func (se *Session) Server() string {
	if se.remote == nil {
		return ""
	}
	return se.remote.client.URL()
}

// Images is where images are loaded and listed; what names the use in
// the refusal of a backend without images.
func (se *Session) Images(what string) (ImageStore, error) {
	if se.remote != nil {
		return se.remote.client, nil
	}
	return backends.Want[backends.Images](se.local, backends.FeatureImages, what)
}

// NoteEmpty says on w when a project has no containers at all, which
// docker compose passes over in silence (a mistyped -p, or a project
// already down): the command still runs and exits 0.
func (se *Session) NoteEmpty(ctx context.Context, w io.Writer, project string) {
	if cs, err := se.engine.PS(ctx, project, engine.PSOptions{All: true}); err == nil && len(cs) == 0 {
		fmt.Fprintf(w, "no containers for project %s\n", project)
	}
}

// printWarnings writes the backend's capability gaps for p, a WARN line
// each.
func (se *Session) printWarnings(p spec.Project) {
	for _, w := range se.engine.Warnings(p) {
		fmt.Fprintf(se.streams.Err, "WARN %s\n", w)
	}
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
