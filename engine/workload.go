package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// asWorkload returns the app as a workload when it runs as one: the
// backend offers workloads (backends.FeatureWorkloads) and says the app fits,
// and nothing of the app is per replica — no companion, no lifecycle hooks
// (the engine runs those in each replica it creates).
func (e *Engine) asWorkload(ctx context.Context, p spec.Project, a spec.App, hash string, files []backends.File, refs map[string]string, force bool) (backends.Workloads, backends.WorkloadSpec, bool, error) {
	wl, ok := e.workloads()
	if !ok {
		return nil, backends.WorkloadSpec{}, false, nil
	}
	if hasHooks(a) {
		e.updateUnused(ctx, a, "its lifecycle hooks run in each replica the engine creates")
		return nil, backends.WorkloadSpec{}, false, nil
	}
	if e.companions != nil {
		if _, need, err := e.companions.Attach(ctx, p, a, 1); err != nil || need {
			if need {
				e.updateUnused(ctx, a, "its caretaker companion is per replica")
			}
			return nil, backends.WorkloadSpec{}, false, err
		}
	}
	tmpl, err := backends.Resolve(backends.ResolveInput{
		Project: p.Name, App: a, Replica: 1, Name: containerName(p.Name, a, 1),
		Labels:   containerLabels(p, a, 1, hash),
		Networks: p.Networks, Volumes: p.Volumes, Files: files, Services: refs,
	})
	if err != nil {
		return nil, backends.WorkloadSpec{}, false, fmt.Errorf("create %s: %w", a.Name, err)
	}
	w := backends.WorkloadSpec{Template: tmpl, Replicas: a.ReplicaCount(), Complete: runsToCompletion(p, a), Force: force, Update: a.Update}
	if a.ContainerName == "" {
		w.NamePrefix = p.Name + "-" + a.Name + "-"
	}
	if why := wl.FitsWorkload(w); why != "" {
		e.updateUnused(ctx, a, why)
		return nil, backends.WorkloadSpec{}, false, nil
	}
	return wl, w, true, nil
}

// updateUnused warns that the app's update settings go unused: the
// backend rolls workloads out as update says, but this app runs replica by
// replica (why), so a change replaces its replicas all at once. A backend
// that declares update a gap has warned already.
func (e *Engine) updateUnused(ctx context.Context, a spec.App, why string) {
	if a.Update == nil {
		return
	}
	if _, gap := e.caps.Gap("update"); gap {
		return
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Service", ID: a.Name, Status: "Warning", Done: true,
		Text: "update: not honored, the service runs replica by replica (" + why + "); a change replaces its replicas all at once"})
}

func isWorkload(c backends.Container) bool { return c.Labels[backends.LabelWorkload] != "" }

func hasHooks(a spec.App) bool {
	h := a.Hooks
	return h != nil && len(h.PostCreate)+len(h.PostStart)+len(h.PostAttach)+len(h.PreStop) > 0
}

// runsToCompletion: another app waits for a to complete, and a does not
// restart on its own (docker compose's one-shot service).
func runsToCompletion(p spec.Project, a spec.App) bool {
	if a.Restart != "" && a.Restart != spec.RestartNo && !strings.HasPrefix(a.Restart, spec.RestartOnFailure) {
		return false
	}
	for _, other := range p.Services {
		if d, ok := other.DependsOn[a.Name]; ok && d.Condition == spec.ConditionCompleted {
			return true
		}
	}
	return false
}

// convergeWorkload applies the app as a workload: replicas it had as
// containers of their own go first, then the runtime rolls the workload
// out.
func (e *Engine) convergeWorkload(ctx context.Context, wl backends.Workloads, w backends.WorkloadSpec, a spec.App, existing []backends.Container) (converged, error) {
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range existing {
		if !isWorkload(c) {
			g.Go(func() error { return e.stopAndRemove(gctx, c, preStop(a)) })
		}
	}
	if err := g.Wait(); err != nil {
		return converged{}, err
	}
	pw := e.progressOf(ctx)
	pw.Event(progress.Event{Kind: "Service", ID: a.Name, Status: "Applying"})
	res, err := wl.ApplyWorkload(ctx, w)
	if err != nil {
		e.failedKind(ctx, "Service", a.Name, err)
		return converged{}, err
	}
	status := "Running"
	if res.Changed {
		status = "Started"
	}
	for _, c := range res.Replicas {
		pw.Event(progress.Event{Kind: "Container", ID: c.Name, Status: status, Done: true})
		e.startHealth(ctx, c.ID, a.Healthcheck)
	}
	pw.Event(progress.Event{Kind: "Service", ID: a.Name, Status: "Applied", Done: true})
	return converged{recreated: res.Changed}, nil
}

// dropWorkload removes the app's workload when it now runs replica by
// replica, and returns the containers that are not its replicas.
func (e *Engine) dropWorkload(ctx context.Context, project, app string, existing []backends.Container) ([]backends.Container, error) {
	var own []backends.Container
	had := false
	for _, c := range existing {
		if isWorkload(c) {
			had = true
		} else {
			own = append(own, c)
		}
	}
	if wl, ok := e.workloads(); ok && had {
		if err := e.removeWorkload(ctx, wl, project, app, nil); err != nil {
			return nil, err
		}
	}
	return own, nil
}

// workloads is the backend's Workloads when it declares the feature.
func (e *Engine) workloads() (backends.Workloads, bool) {
	wl, err := backends.Want[backends.Workloads](e.b, backends.FeatureWorkloads, "workloads")
	return wl, err == nil
}

// removeWorkload removes an app's workload with its replicas.
func (e *Engine) removeWorkload(ctx context.Context, wl backends.Workloads, project, app string, timeout *time.Duration) error {
	pw := e.progressOf(ctx)
	pw.Event(progress.Event{Kind: "Service", ID: app, Status: "Removing"})
	if err := wl.RemoveWorkload(ctx, project, app, timeout); err != nil {
		e.failedKind(ctx, "Service", app, err)
		return fmt.Errorf("remove service %s: %w", app, err)
	}
	pw.Event(progress.Event{Kind: "Service", ID: app, Status: "Removed", Done: true})
	return nil
}

// failedKind reports an error of a service or another non-container
// object, as failed does for containers.
func (e *Engine) failedKind(ctx context.Context, kind, id string, err error) {
	text := err.Error()
	if ctx.Err() != nil {
		text = "canceled"
	}
	e.progressOf(ctx).Event(progress.Event{Kind: kind, ID: id, Status: "Error", Text: text, Done: true, Err: true})
}

// removeIdleWorkloads removes, on down, the workloads with no replica to
// list (failing to make pods, say): the spec's apps', or with no spec (or
// with orphans) all of the project's.
func (e *Engine) removeIdleWorkloads(ctx context.Context, project string, o DownOptions) error {
	wl, ok := e.workloads()
	if !ok {
		return nil
	}
	apps := []string{""}
	if o.Spec != nil && !o.RemoveOrphans {
		apps = o.Spec.ServiceNames()
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, app := range apps {
		g.Go(func() error {
			if err := wl.RemoveWorkload(gctx, project, app, o.Timeout); err != nil {
				return fmt.Errorf("down %s: %w", project, err)
			}
			return nil
		})
	}
	return g.Wait()
}
