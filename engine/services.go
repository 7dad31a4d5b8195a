package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// PSOptions select containers of a project.
type PSOptions struct {
	Services []string // empty: all
	All      bool     // include stopped containers
}

// PS lists a project's containers, sorted by name, with one List call.
func (e *Engine) PS(ctx context.Context, project string, o PSOptions) ([]backends.Container, error) {
	cs, err := e.b.List(ctx, backends.ListOptions{Labels: projectLabels(project), All: o.All})
	if err != nil {
		return nil, fmt.Errorf("list project %s: %w", project, err)
	}
	want := map[string]bool{}
	for _, s := range o.Services {
		want[s] = true
	}
	out := cs[:0]
	for _, c := range cs {
		if len(want) == 0 || want[c.App()] {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// service finds replica index (1-based) of a service.
func (e *Engine) service(ctx context.Context, project, service string, index int) (backends.Container, error) {
	if index < 1 {
		index = 1
	}
	cs, err := e.b.List(ctx, backends.ListOptions{Labels: appLabels(project, service), All: true})
	if err != nil {
		return backends.Container{}, err
	}
	for _, c := range cs {
		if c.Replica() == strconv.Itoa(index) && !c.Oneoff() {
			return c, nil
		}
	}
	return backends.Container{}, fmt.Errorf("service %q has no container %d in project %s: is it up?", service, index, project)
}

// LifecycleOptions select services for start/stop/restart/kill/rm.
type LifecycleOptions struct {
	Services []string
	Timeout  *time.Duration // stop/restart grace override
	Signal   string         // kill
	Spec     *spec.Project  // for dependency order and hooks when known
	Volumes  bool           // rm: also anonymous volumes
	Stopped  bool           // rm: only stopped containers (default true)
}

// selected are the services' replicas, without the runs' one-off
// containers (docker compose's start, stop, kill, rm and logs leave them
// be too; down removes them).
func (e *Engine) selected(ctx context.Context, project string, services []string, all bool) ([]backends.Container, error) {
	cs, err := e.PS(ctx, project, PSOptions{Services: services, All: all})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(cs, backends.Container.Oneoff), nil
}

// Start starts a project's existing stopped containers in dependency order.
func (e *Engine) Start(ctx context.Context, project string, o LifecycleOptions) error {
	if err := e.checkSpec(o.Spec); err != nil {
		return err
	}
	cs, err := e.selected(ctx, project, o.Services, true)
	if err != nil {
		return err
	}
	if len(cs) == 0 {
		return fmt.Errorf("project %s has no containers to start: run up first", project)
	}
	byApp, deps := groupByApp(cs)
	waves := reverseWaves(keys(byApp), deps)
	for i := len(waves) - 1; i >= 0; i-- { // dependencies first
		g, gctx := errgroup.WithContext(ctx)
		for _, app := range waves[i] {
			for _, c := range byApp[app] {
				if c.Running() {
					continue
				}
				var a spec.App
				if o.Spec != nil {
					a = o.Spec.Services[app]
				}
				g.Go(func() error { return e.start(gctx, a, c.ID, c.Name) })
			}
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops a project's running containers, dependents first.
func (e *Engine) Stop(ctx context.Context, project string, o LifecycleOptions) error {
	if err := e.checkSpec(o.Spec); err != nil {
		return err
	}
	cs, err := e.selected(ctx, project, o.Services, false)
	if err != nil {
		return err
	}
	return e.stopContainers(ctx, cs, o.Spec, o.Timeout, false)
}

// Restart stops then starts the selected services' containers.
func (e *Engine) Restart(ctx context.Context, project string, o LifecycleOptions) error {
	if err := e.checkSpec(o.Spec); err != nil {
		return err
	}
	cs, err := e.selected(ctx, project, o.Services, true)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		g.Go(func() error {
			e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Restarting"})
			if err := e.restartContainer(gctx, c.ID, backends.StopOptions{Timeout: o.Timeout}); err != nil {
				return fmt.Errorf("restart %s: %w", c.Name, err)
			}
			e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Started", Done: true})
			return nil
		})
	}
	return g.Wait()
}

// Kill sends a signal (default SIGKILL) to running containers.
func (e *Engine) Kill(ctx context.Context, project string, o LifecycleOptions) error {
	if err := e.checkSpec(o.Spec); err != nil {
		return err
	}
	cs, err := e.selected(ctx, project, o.Services, false)
	if err != nil {
		return err
	}
	sig := spec.SIGKILL
	if o.Signal != "" {
		n, ok := spec.ParseSignal(o.Signal)
		if !ok {
			return fmt.Errorf("kill: %q is not a signal name such as SIGTERM or SIGINT, or a number: %w", o.Signal, errdefs.ErrInvalidArgument)
		}
		sig = spec.Signal(n)
	}
	killer, err := backends.Want[backends.Signaler](e.b, backends.FeatureKill, "sending signals (kill)")
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		g.Go(func() error {
			e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Killing"})
			if err := killer.Kill(gctx, c.ID, sig); err != nil {
				return fmt.Errorf("kill %s: %w", c.Name, err)
			}
			e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Killed", Done: true})
			return nil
		})
	}
	return g.Wait()
}

// Remove removes stopped containers of the selected services (with Stopped
// false, running ones are stopped first).
func (e *Engine) Remove(ctx context.Context, project string, o LifecycleOptions) ([]backends.Container, error) {
	if err := e.checkSpec(o.Spec); err != nil {
		return nil, err
	}
	cs, err := e.selected(ctx, project, o.Services, true)
	if err != nil {
		return nil, err
	}
	var removed []backends.Container
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		if c.Running() && o.Stopped {
			continue
		}
		removed = append(removed, c)
		g.Go(func() error {
			if err := e.stop(gctx, c, &stopWith{Timeout: o.Timeout}); err != nil {
				return err
			}
			return e.remove(gctx, c, o.Volumes)
		})
	}
	return removed, g.Wait()
}

// Port returns the host address a service's private port is published on.
func (e *Engine) Port(ctx context.Context, project, service string, port int, proto string, index int) (string, error) {
	c, err := e.service(ctx, project, service, index)
	if err != nil {
		return "", err
	}
	if proto == "" {
		proto = "tcp"
	}
	for _, p := range c.Ports {
		if p.ContainerPort == port && p.Protocol == proto && p.HostPort != 0 {
			ip := p.HostIP
			if ip == "" {
				ip = "0.0.0.0"
			}
			if strings.Contains(ip, ":") {
				ip = "[" + ip + "]"
			}
			return fmt.Sprintf("%s:%d", ip, p.HostPort), nil
		}
	}
	return "", fmt.Errorf("%s: port %d/%s is not published", c.Name, port, proto)
}

// Top lists each running container's processes.
func (e *Engine) Top(ctx context.Context, project string, services []string) (map[string]backends.Processes, error) {
	pl, err := backends.Want[backends.ProcessLister](e.b, backends.FeatureTop, "listing processes (top)")
	if err != nil {
		return nil, err
	}
	cs, err := e.selected(ctx, project, services, false)
	if err != nil {
		return nil, err
	}
	out := map[string]backends.Processes{}
	for _, c := range cs {
		ps, err := pl.Top(ctx, c.ID, "")
		if err != nil {
			return nil, fmt.Errorf("top %s: %w", c.Name, err)
		}
		out[c.Name] = ps
	}
	return out, nil
}

// ImageUse is one row of `compose images`.
type ImageUse struct {
	Container string
	Image     backends.Image
	Ref       string
}

// Images lists the images a project's containers use.
func (e *Engine) Images(ctx context.Context, project string, services []string) ([]ImageUse, error) {
	cs, err := e.selected(ctx, project, services, true)
	if err != nil {
		return nil, err
	}
	var out []ImageUse
	for _, c := range cs {
		img, err := e.inspectImage(ctx, c.Image)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		out = append(out, ImageUse{Container: c.Name, Image: img, Ref: c.Image})
	}
	return out, nil
}

func groupByApp(cs []backends.Container) (map[string][]backends.Container, map[string][]string) {
	byApp := map[string][]backends.Container{}
	deps := map[string][]string{}
	for _, c := range cs {
		byApp[c.App()] = append(byApp[c.App()], c)
		if d := c.DependsOn(); len(d) > 0 {
			deps[c.App()] = d
		}
	}
	return byApp, deps
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
