package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/containerd/errdefs"
	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// converged reports what converging one app did.
type converged struct {
	recreated bool // at least one replica was created anew
}

// converge makes the app's replicas match the spec: unchanged ones are left
// running (started if stopped), changed ones recreated, missing ones
// created, extra ones removed. Replicas are handled in parallel. existing
// are the app's containers as listed when Up began (Up holds the project
// lock, so nothing else changes them meanwhile). With co.noStart nothing
// is started: created replicas wait for a start.
func (e *Engine) converge(ctx context.Context, p spec.Project, a spec.App, existing []backends.Container, co convergeOptions) (converged, error) {
	files, err := e.files(a)
	if err != nil {
		return converged{}, err
	}
	refs, err := e.serviceRefs(ctx, p, a)
	if err != nil {
		return converged{}, err
	}
	built, err := e.builtImage(ctx, a)
	if err != nil {
		return converged{}, err
	}
	hash := configHash(p, a, files, refs, built)
	if res, done, err := e.convergeAsWorkload(ctx, p, a, existing, co, hash, files, refs); done || err != nil {
		return res, err
	}
	if existing, err = e.dropWorkload(ctx, p.Name, a.Name, existing); err != nil {
		return converged{}, err
	}
	byReplica := map[int]backends.Container{}
	var extra []backends.Container
	n := a.ReplicaCount()
	for _, c := range existing {
		r := c.ReplicaNumber()
		if _, dup := byReplica[r]; dup || r < 1 || r > n {
			extra = append(extra, c)
			continue
		}
		byReplica[r] = c
	}

	var recreated atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	for i := 1; i <= n; i++ {
		c, ok := byReplica[i]
		g.Go(func() error {
			var err error
			switch {
			case ok && co.noStart && (co.keep || c.Labels[backends.LabelConfigHash] == hash && !co.force):
				e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Created", Done: true})
			case ok && (co.keep || c.Labels[backends.LabelConfigHash] == hash && !co.force):
				err = e.ensureRunning(gctx, a, c)
				if !errors.Is(err, backends.ErrStaleTask) {
					break
				}
				// Only a new container can start: replace it, as a
				// changed one would be.
				e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Recreate", Text: "the runtime kept its task across a crash"})
				if err := e.remove(gctx, c, true); err != nil {
					return err
				}
				recreated.Store(true)
				c, err = e.createAndStart(gctx, p, a, i, hash, files, refs, true, nil)
			case ok:
				e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Recreate"})
				inherit, err := e.retire(gctx, c, a, co.renewAnon)
				if err != nil {
					return err
				}
				recreated.Store(true)
				c, err = e.createAndStart(gctx, p, a, i, hash, files, refs, !co.noStart, inherit)
				if err != nil {
					return err
				}
			default:
				recreated.Store(true)
				c, err = e.createAndStart(gctx, p, a, i, hash, files, refs, !co.noStart, nil)
			}
			if err != nil || a.Hooks == nil || co.noStart {
				return err
			}
			return e.runHooks(gctx, c.ID, c.Name, "postAttach", a.Hooks.PostAttach)
		})
	}
	for _, c := range extra {
		g.Go(func() error { return e.stopAndRemove(gctx, c, preStop(a)) })
	}
	err = g.Wait()
	return converged{recreated: recreated.Load()}, err
}

// convergeAsWorkload converges a as a workload where it runs as one
// (done). A workload starts when applied and changes when updated: under
// --no-start or --no-recreate one already there is left as it is (with
// --no-start --force-recreate it is replaced), and other replicas are
// containers of their own (which a plain up replaces by the workload).
func (e *Engine) convergeAsWorkload(ctx context.Context, p spec.Project, a spec.App, existing []backends.Container, co convergeOptions,
	hash string, files []backends.File, refs map[string]string) (res converged, done bool, err error) {
	if co.noStart || co.keep && len(existing) > 0 {
		if !slices.ContainsFunc(existing, isWorkload) || co.noStart && co.force {
			return converged{}, false, nil // replica by replica (dropWorkload removes the workload)
		}
		e.progressOf(ctx).Event(progress.Event{Kind: "Service", ID: a.Name, Status: "Running", Done: true})
		return converged{}, true, nil
	}
	wl, w, ok, err := e.asWorkload(ctx, p, a, hash, files, refs, co.force)
	if err != nil || !ok {
		return converged{}, false, err
	}
	res, err = e.convergeWorkload(ctx, wl, w, a, existing)
	return res, true, err
}

// serviceRefs maps each service a's network_mode/pid/ipc "service:NAME"
// names to the container ID of its first replica, for Resolve.
func (e *Engine) serviceRefs(ctx context.Context, p spec.Project, a spec.App) (map[string]string, error) {
	refs := map[string]string{}
	for _, mode := range []string{a.NetworkMode, a.PidMode, a.IpcMode} {
		s, ok := serviceRef(mode)
		if !ok || refs[s] != "" {
			continue
		}
		cs, err := e.b.List(ctx, backends.ListOptions{Labels: appLabels(p.Name, s)})
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if c.Replica() == "1" {
				refs[s] = c.ID
			}
		}
		if refs[s] == "" {
			return nil, fmt.Errorf("services.%s: %q is not running", a.Name, mode)
		}
	}
	return refs, nil
}

// ensureRunning starts a stopped replica (running its postStart hooks);
// a running one is left alone.
func (e *Engine) ensureRunning(ctx context.Context, a spec.App, c backends.Container) error {
	if c.Running() {
		e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Running", Done: true})
		e.startHealth(ctx, c.ID, a.Healthcheck)
		return nil
	}
	return e.start(ctx, a, c.ID, c.Name)
}

// retire stops and removes a replica that a new one replaces. Its
// anonymous volumes (target → name) are kept for the new one, as docker
// compose keeps them, unless renew (up -V) or the backend cannot hand
// them over (then they go with it).
func (e *Engine) retire(ctx context.Context, c backends.Container, a spec.App, renew bool) (map[string]string, error) {
	vi, err := backends.Want[backends.VolumeInheritor](e.b, backends.FeatureInherit, "inheriting volumes")
	if renew || err != nil {
		return nil, e.stopAndRemove(ctx, c, preStop(a))
	}
	anon, err := vi.AnonymousVolumes(ctx, c.ID)
	if err != nil {
		return nil, fmt.Errorf("recreate %s: %w", c.Name, err)
	}
	if err := e.stop(ctx, c, preStop(a)); err != nil {
		return nil, err
	}
	return anon, e.remove(ctx, c, len(anon) == 0)
}

// dropInherited removes the volumes of inherit that cs does not mount
// (all of them when cs is nil: its container was not made).
func (e *Engine) dropInherited(ctx context.Context, inherit map[string]string, cs *backends.ContainerSpec) {
	if len(inherit) == 0 {
		return
	}
	kept := map[string]bool{}
	if cs != nil {
		for _, n := range backends.InheritedNames(*cs) {
			kept[n] = true
		}
	}
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, n := range inherit {
		if !kept[n] {
			_ = e.b.RemoveVolume(rmCtx, n, true) // an old replica's: nothing is left to use it
		}
	}
}

// createAndStart creates a replica, starts it (unless start is false) and
// runs its lifecycle hooks in the devcontainer order: postCreate
// (onCreate, updateContent, postCreate) once, after the first start, then
// postStart. A container that cannot be started is removed again: nothing
// half-applied stays. It inherits the anonymous volumes (inherit) of the
// replica it replaces.
func (e *Engine) createAndStart(ctx context.Context, p spec.Project, a spec.App, replica int, hash string, files []backends.File, refs map[string]string, start bool, inherit map[string]string) (backends.Container, error) {
	name := containerName(p.Name, a, replica)
	// A companion (the caretaker) owns the replica's network namespace
	// and is ready before the app is created; it goes when the app fails.
	j, err := e.attach(ctx, p, a, replica, hash)
	if err != nil {
		e.dropInherited(ctx, inherit, nil)
		return backends.Container{}, err
	}
	a = j.app
	created := false
	defer func() {
		if !created {
			j.undo()
		}
	}()
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Creating"})
	// The backend removes what it created when the rest of creating
	// (connecting networks, copying files) fails, and names the container.
	cs, err := backends.Resolve(backends.ResolveInput{
		Project: p.Name, App: a, Replica: replica, Name: name,
		Labels:   containerLabels(p, a, replica, hash),
		Networks: p.Networks, Volumes: p.Volumes, Files: files,
		Services: refs, JoinNetwork: j.netns, Inherit: inherit,
	})
	if err != nil {
		e.dropInherited(ctx, inherit, nil)
		e.failed(ctx, name, err)
		return backends.Container{}, fmt.Errorf("create %s: %w", name, err)
	}
	cs.Sidecar, cs.Loopback = j.sidecar, j.loopback
	c, err := e.b.Create(ctx, cs)
	if err != nil {
		e.dropInherited(ctx, inherit, nil)
		e.failed(ctx, name, err)
		return backends.Container{}, err
	}
	e.dropInherited(ctx, inherit, &cs)
	c.Name = name
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Created"})
	created = true
	if !start {
		return c, nil
	}
	if err := e.startContainer(ctx, a, c.ID, name); err != nil {
		created = false // the companion goes too
		// Removed even when ctx is done (Ctrl-C, a sibling failed).
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if rmErr := e.b.Remove(rmCtx, c.ID, backends.RemoveOptions{Force: true, Volumes: true}); rmErr != nil {
			return c, fmt.Errorf("%w (and removing the created container failed: %w)", err, rmErr)
		}
		e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Removed", Text: "(start failed)", Done: true, Err: true})
		return c, fmt.Errorf("%w (the created container was removed)", err)
	}
	if a.Hooks == nil {
		return c, nil
	}
	if err := e.runHooks(ctx, c.ID, name, "postCreate", a.Hooks.PostCreate); err != nil {
		return c, err
	}
	return c, e.runHooks(ctx, c.ID, name, "postStart", a.Hooks.PostStart)
}

// start starts an existing container and runs the app's postStart hooks.
func (e *Engine) start(ctx context.Context, a spec.App, id, name string) error {
	if err := e.startContainer(ctx, a, id, name); err != nil {
		return err
	}
	if a.Hooks == nil {
		return nil
	}
	return e.runHooks(ctx, id, name, "postStart", a.Hooks.PostStart)
}

// startContainer starts a container and, where the engine runs them, its
// healthchecks.
func (e *Engine) startContainer(ctx context.Context, a spec.App, id, name string) error {
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Starting"})
	if err := e.b.Start(ctx, id); err != nil {
		if errors.Is(err, backends.ErrStaleTask) {
			// Up replaces the container; elsewhere the error says so.
			return fmt.Errorf("start %s: %w (up replaces it)", name, err)
		}
		e.failed(ctx, name, err)
		return fmt.Errorf("start %s: %w", name, err)
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Started", Done: true})
	e.startHealth(ctx, id, a.Healthcheck)
	return nil
}

// failed reports a container's error; when ctx is done the failure is the
// cancellation (another container failed, or the user interrupted), and
// repeating the cause under every container would only add noise.
func (e *Engine) failed(ctx context.Context, name string, err error) {
	text := err.Error()
	if ctx.Err() != nil {
		text = "canceled"
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Error", Text: text, Done: true, Err: true})
}

// runHooks executes lifecycle commands in order; a failing one is an error
// naming it.
func (e *Engine) runHooks(ctx context.Context, id, name, event string, hooks []spec.Hook) error {
	// A backend whose exec cannot be privileged declares the gap, and its
	// warning says the hook runs with the container's privileges.
	_, unprivileged := e.caps.Gap("hooks.privileged")
	for i, h := range hooks {
		var out strings.Builder
		code, err := e.b.Exec(ctx, id, backends.ExecOptions{
			Cmd: h.Command, Env: h.Environ(), User: h.User, WorkingDir: h.WorkingDir, Privileged: h.Privileged && !unprivileged,
			Stdout: &out, Stderr: &out,
		})
		label := h.Name
		if label == "" {
			label = fmt.Sprintf("%s[%d]", event, i)
		}
		if err != nil {
			return fmt.Errorf("%s: %s hook: %w", name, label, err)
		}
		if code != 0 {
			return fmt.Errorf("%s: %s hook %q exited with code %d: %s", name, label, strings.Join(h.Command, " "), code, strings.TrimSpace(out.String()))
		}
	}
	return nil
}

// preStop makes the app's preStop hooks run before the engine stops one of
// its containers on its own (recreate, scale down), as on down and stop.
func preStop(a spec.App) *stopWith {
	if a.Hooks == nil {
		return nil
	}
	return &stopWith{PreStop: a.Hooks.PreStop}
}

// stopAndRemove stops a container gracefully (timeout nil: its own grace
// period) and removes it with its anonymous volumes.
func (e *Engine) stopAndRemove(ctx context.Context, c backends.Container, o *stopWith) error {
	if err := e.stop(ctx, c, o); err != nil {
		return err
	}
	return e.remove(ctx, c, true)
}

func (e *Engine) remove(ctx context.Context, c backends.Container, volumes bool) error {
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Removing"})
	// Gone already is what a remove wants: a companion goes with its app,
	// and a runtime may finish a removal it reported failed (libpod, CI51).
	if err := e.b.Remove(ctx, c.ID, backends.RemoveOptions{Force: true, Volumes: volumes}); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove %s: %w", c.Name, err)
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Removed", Done: true})
	return e.removeCompanion(ctx, c)
}
