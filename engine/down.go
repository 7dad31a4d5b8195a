package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// DownOptions control teardown.
type DownOptions struct {
	// Spec, when known, supplies preStop hooks and tells orphans apart;
	// without it everything labelled with the project is removed.
	Spec          *spec.Project
	Volumes       bool           // also remove the project's named volumes
	RemoveOrphans bool           // also remove containers of services not in Spec
	Timeout       *time.Duration // grace period override (-t)
}

// Down stops and removes a project's containers — dependents before what
// they depend on, each wave in parallel, each container with its own stop
// signal and grace period — then its networks and, with Volumes, volumes.
// It finds everything by labels, so it works after a crash too.
func (e *Engine) Down(ctx context.Context, project string, o DownOptions) error {
	if err := e.checkSpec(o.Spec); err != nil {
		return err
	}
	unlock, err := e.lockProject(ctx, project)
	if err != nil {
		return err
	}
	defer unlock()
	all, err := e.b.List(ctx, backends.ListOptions{Labels: projectLabels(project), All: true})
	if err != nil {
		return fmt.Errorf("list project %s: %w", project, err)
	}
	var cs []backends.Container
	names := map[string]bool{}
	for _, c := range all {
		names[c.Name] = true
	}
	companions := 0
	for _, c := range all {
		if of := c.Labels[LabelCompanionOf]; of != "" && names[of] {
			companions++ // removed with its app
			continue
		}
		if o.Spec != nil && !o.RemoveOrphans {
			if _, ok := o.Spec.Services[c.App()]; !ok && !c.Oneoff() {
				continue
			}
		}
		cs = append(cs, c)
	}
	// Each container is removed as soon as it has stopped: nothing waits
	// for the slowest stop of its wave.
	if err := e.stopContainers(ctx, cs, o.Spec, o.Timeout, true); err != nil {
		return err
	}
	if err := e.removeIdleWorkloads(ctx, project, o); err != nil {
		return err
	}
	if len(cs)+companions < len(all) {
		return nil // orphans still use the networks
	}
	if err := e.removeNetworks(ctx, project); err != nil {
		return err
	}
	if o.Volumes {
		return e.removeVolumes(ctx, project)
	}
	return nil
}

// stopContainers stops containers in reverse dependency order: each wave
// holds the services nothing still running depends on. With remove, each
// container is removed (with its anonymous volumes) right after it stops.
func (e *Engine) stopContainers(ctx context.Context, cs []backends.Container, p *spec.Project, timeout *time.Duration, remove bool) error {
	byApp, deps := groupByApp(cs)
	wl, _ := e.workloads()
	for _, wave := range reverseWaves(keys(byApp), deps) {
		g, gctx := errgroup.WithContext(ctx)
		for _, app := range wave {
			replicas := byApp[app]
			if i := slices.IndexFunc(replicas, isWorkload); remove && wl != nil && i >= 0 {
				// The runtime keeps these replicas: they go with the app's
				// workload, as a whole.
				project := replicas[i].Project()
				g.Go(func() error { return e.removeWorkload(gctx, wl, project, app, timeout) })
				replicas = slices.DeleteFunc(slices.Clone(replicas), isWorkload)
			}
			with := &stopWith{Timeout: timeout}
			if p != nil {
				if a, ok := p.Services[app]; ok && a.Hooks != nil {
					with.PreStop = a.Hooks.PreStop
				}
			}
			for _, c := range replicas {
				g.Go(func() error {
					if err := e.stop(gctx, c, with); err != nil || !remove {
						return err
					}
					return e.remove(gctx, c, true)
				})
			}
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) removeNetworks(ctx context.Context, project string) error {
	netw := e.networks()
	if netw == nil {
		return nil
	}
	nets, err := netw.ListNetworks(ctx, backends.ListOptions{Labels: projectLabels(project)})
	if err != nil {
		return fmt.Errorf("list networks of %s: %w", project, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range nets {
		g.Go(func() error {
			e.progressOf(ctx).Event(progress.Event{Kind: "Network", ID: n.Name, Status: "Removing"})
			if err := netw.RemoveNetwork(gctx, n.ID); err != nil {
				return fmt.Errorf("network %s: %w", n.Name, err) // the backend says "remove network ID"
			}
			e.progressOf(ctx).Event(progress.Event{Kind: "Network", ID: n.Name, Status: "Removed", Done: true})
			return nil
		})
	}
	return g.Wait()
}

func (e *Engine) removeVolumes(ctx context.Context, project string) error {
	vols, err := e.b.ListVolumes(ctx, backends.ListOptions{Labels: projectLabels(project)})
	if err != nil {
		return fmt.Errorf("list volumes of %s: %w", project, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, v := range vols {
		g.Go(func() error {
			e.progressOf(ctx).Event(progress.Event{Kind: "Volume", ID: v.Name, Status: "Removing"})
			if err := e.b.RemoveVolume(gctx, v.Name, false); err != nil {
				return err // the backend names the volume
			}
			e.progressOf(ctx).Event(progress.Event{Kind: "Volume", ID: v.Name, Status: "Removed", Done: true})
			return nil
		})
	}
	return g.Wait()
}
