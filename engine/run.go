package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// RunOptions are compose run's: a one-off container of a service. The
// service's overrides (command, environment, volumes, ports, TTY) are in
// the spec the caller hands Run.
type RunOptions struct {
	Service    string
	Name       string // the container's; "" : <project>-<service>-run-<hex>
	NoDeps     bool   // do not start the service's dependencies
	Detach     bool   // start it and return its name
	Remove     bool   // remove it once it exits (--rm)
	UseAliases bool   // answer to the service's name and aliases on its networks
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer // ignored with a TTY (merged into Stdout)
	Resize     <-chan backends.TermSize
	// Attaching, when set, is called before the container's output
	// starts (the caller ends its progress display there).
	Attaching func()
}

// RunResult is what a run left: its container, and the exit code when it
// ran in the foreground.
type RunResult struct {
	Name, ID string
	ExitCode int
}

// Run runs a one-off container of a service, as docker compose run does:
// its dependencies up first (and their conditions met), then the
// container created with compose's one-off labels, attached and started,
// its exit code returned. Host policy is checked on the whole spec first,
// so nothing starts that the run could not.
func (e *Engine) Run(ctx context.Context, p spec.Project, o RunOptions) (RunResult, error) {
	a, ok := p.Services[o.Service]
	if !ok {
		return RunResult{}, fmt.Errorf("no such service: %s: %w", o.Service, errdefs.ErrNotFound)
	}
	if err := e.policy.Check(p); err != nil {
		return RunResult{}, err
	}
	if err := backends.Refusal(e.b.Name(), e.caps, a); err != nil {
		return RunResult{}, err
	}
	var att backends.Attacher
	if !o.Detach {
		var err error
		if att, err = backends.Want[backends.Attacher](e.b, backends.FeatureAttach, "run in the foreground (attach)"); err != nil {
			return RunResult{}, fmt.Errorf("%w: run it with -d, then read its logs", err)
		}
	}
	files, err := e.files(a)
	if err != nil {
		return RunResult{}, err
	}
	if err := e.runDeps(ctx, p, a, o.NoDeps); err != nil {
		return RunResult{}, err
	}
	if err := e.ensureImages(ctx, []spec.App{a}); err != nil {
		return RunResult{}, err
	}
	if err := e.ensureResources(ctx, p, []spec.App{a}); err != nil {
		return RunResult{}, err
	}
	refs, err := e.serviceRefs(ctx, p, a)
	if err != nil {
		return RunResult{}, err
	}
	c, err := e.createOneoff(ctx, p, a, o, files, refs)
	if err != nil {
		return RunResult{}, err
	}
	res := RunResult{Name: c.Name, ID: c.ID}
	if o.Detach {
		return res, e.startContainer(ctx, a, c.ID, c.Name)
	}
	res.ExitCode, err = e.runAttached(ctx, att, a, c, o)
	if o.Remove {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if rmErr := e.b.Remove(rmCtx, c.ID, backends.RemoveOptions{Force: true, Volumes: true}); rmErr != nil && err == nil {
			err = fmt.Errorf("remove %s: %w", c.Name, rmErr)
		}
	}
	return res, err
}

// runDeps brings a's dependencies up (and theirs) and waits for the
// conditions a has on them, unless noDeps.
func (e *Engine) runDeps(ctx context.Context, p spec.Project, a spec.App, noDeps bool) error {
	deps := dependencies(a)
	var names []string
	for d := range deps {
		if _, ok := p.Services[d]; ok {
			names = append(names, d)
		}
	}
	if noDeps || len(names) == 0 {
		return nil
	}
	if _, err := e.Up(ctx, p, UpOptions{Services: names}); err != nil {
		return err
	}
	for _, d := range names {
		if err := e.waitCondition(ctx, p, d, deps[d].Condition); err != nil {
			return fmt.Errorf("service %s: %w", a.Name, err)
		}
	}
	return nil
}

// createOneoff creates the run's container: the service's, named for the
// run, labelled one-off, never restarted.
func (e *Engine) createOneoff(ctx context.Context, p spec.Project, a spec.App, o RunOptions, files []backends.File, refs map[string]string) (backends.Container, error) {
	name := o.Name
	if name == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		name = fmt.Sprintf("%s-%s-run-%s", p.Name, a.Name, hex.EncodeToString(b))
	}
	a.ContainerName, a.Restart, a.Replicas, a.Hooks = name, "", nil, nil
	j, err := e.attach(ctx, p, a, 1, "")
	if err != nil {
		return backends.Container{}, err
	}
	a = j.app
	labels := containerLabels(p, a, 1, "")
	labels[backends.ComposeOneoff], labels[backends.LabelOneoff] = "True", "true"
	maps.DeleteFunc(labels, func(k, _ string) bool { return k == backends.LabelConfigHash || k == backends.ComposeConfigHash })
	cs, err := backends.Resolve(backends.ResolveInput{
		Project: p.Name, App: a, Replica: 1, Name: name, Labels: labels,
		Networks: p.Networks, Volumes: p.Volumes, Files: files, Services: refs, JoinNetwork: j.netns,
		StdinOnce: o.Stdin != nil && !o.Detach, NoAliases: !o.UseAliases,
	})
	if err != nil {
		j.undo()
		return backends.Container{}, fmt.Errorf("create %s: %w", name, err)
	}
	cs.Sidecar, cs.Loopback = j.sidecar, j.loopback
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Creating"})
	c, err := e.b.Create(ctx, cs)
	if err != nil {
		j.undo()
		e.failed(ctx, name, err)
		return backends.Container{}, err
	}
	c.Name = name
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Created", Done: true})
	return c, nil
}

// runAttached attaches to c, starts it once attached (so no output is
// missed), and returns its exit code once it exits and its output is
// drained. Interrupted (ctx done), it is killed.
func (e *Engine) runAttached(ctx context.Context, att backends.Attacher, a spec.App, c backends.Container, o RunOptions) (int, error) {
	if o.Attaching != nil {
		o.Attaching()
	}
	attached := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- att.Attach(ctx, c.ID, backends.AttachOptions{
			Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Stream: true, Resize: o.Resize,
			Attached: func() { close(attached) },
		})
	}()
	select {
	case <-attached:
	case err := <-done:
		return -1, fmt.Errorf("attach to %s: %w", c.Name, err)
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	if err := e.b.Start(ctx, c.ID); err != nil {
		return -1, fmt.Errorf("start %s: %w", c.Name, err)
	}
	e.startHealth(ctx, c.ID, a.Healthcheck)
	code, err := e.b.Wait(ctx, c.ID)
	if err != nil {
		if ctx.Err() != nil {
			killCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = e.b.Stop(killCtx, c.ID, backends.StopOptions{Timeout: new(time.Duration)})
		}
		return -1, fmt.Errorf("wait for %s: %w", c.Name, err)
	}
	// The output after the exit is still on its way: drain it, briefly.
	// The attach ends with the container; how (a runtime may answer
	// "not running" once its monitor is gone) adds nothing to the exit.
	select {
	case err := <-done:
		_ = err
	case <-time.After(5 * time.Second):
	}
	return code, nil
}
