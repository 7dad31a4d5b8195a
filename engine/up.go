package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/containerd/errdefs"
	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// UpOptions select what Up applies.
type UpOptions struct {
	Services      []string // empty: all
	NoDeps        bool     // do not also start the services' dependencies
	ForceRecreate bool
	// NoRecreate keeps existing containers even when their configuration
	// changed (up --no-recreate).
	NoRecreate bool
	// AlwaysRecreateDeps recreates the dependencies of the named Services
	// even when unchanged (up --always-recreate-deps).
	AlwaysRecreateDeps bool
	// NoStart creates what is missing or changed and starts nothing
	// (compose create, up --no-start).
	NoStart bool
	// RenewAnonVolumes gives a recreated container new anonymous
	// volumes instead of its predecessor's (up -V).
	RenewAnonVolumes bool
	Wait             bool // block until services are running/healthy
	RemoveOrphans    bool
}

// Check refuses options that contradict each other, as docker compose
// does.
func (o UpOptions) Check() error {
	switch {
	case o.ForceRecreate && o.NoRecreate:
		return fmt.Errorf("--force-recreate and --no-recreate are incompatible: %w", errdefs.ErrInvalidArgument)
	case o.AlwaysRecreateDeps && o.NoRecreate:
		return fmt.Errorf("--always-recreate-deps and --no-recreate are incompatible: %w", errdefs.ErrInvalidArgument)
	case o.NoStart && o.Wait:
		return fmt.Errorf("--no-start and --wait are incompatible: %w", errdefs.ErrInvalidArgument)
	}
	return nil
}

// convergeOptions are how converge treats an app's replicas.
type convergeOptions struct {
	force   bool // recreate unchanged replicas too
	keep    bool // keep existing replicas, changed or not
	noStart bool // create, start nothing
	// renewAnon: a recreated replica gets new anonymous volumes.
	renewAnon bool
}

// convergeOptions are the options for service name.
func (o UpOptions) convergeOptions(name string) convergeOptions {
	co := convergeOptions{force: o.ForceRecreate, keep: o.NoRecreate, noStart: o.NoStart, renewAnon: o.RenewAnonVolumes}
	if o.AlwaysRecreateDeps && len(o.Services) > 0 && !slices.Contains(o.Services, name) {
		co.force = true // a dependency the user did not name
	}
	return co
}

// UpResult reports what Up found besides the project.
type UpResult struct {
	// Orphans are containers of the project whose service is gone from the
	// spec (removed when RemoveOrphans is set).
	Orphans []backends.Container
}

// Up applies the project: policy first (nothing is created when it
// refuses), then images, networks and volumes, then services in dependency
// order, independent ones in parallel. It is idempotent: unchanged services
// are left running.
func (e *Engine) Up(ctx context.Context, p spec.Project, o UpOptions) (UpResult, error) {
	if err := o.Check(); err != nil {
		return UpResult{}, err
	}
	if err := e.policy.Check(p); err != nil {
		return UpResult{}, err
	}
	sel, err := selectServices(p, o.Services, o.NoDeps)
	if err != nil {
		return UpResult{}, err
	}
	unlock, err := e.lockProject(ctx, p.Name)
	if err != nil {
		return UpResult{}, err
	}
	defer unlock()

	var apps []spec.App
	for _, n := range p.ServiceNames() {
		if sel[n] {
			if err := backends.Refusal(e.b.Name(), e.caps, p.Services[n]); err != nil {
				return UpResult{}, err
			}
			// Secrets and configs it may not or cannot read refuse the
			// up before a network or volume is made for it.
			if _, err := e.files(p.Services[n]); err != nil {
				return UpResult{}, err
			}
			apps = append(apps, p.Services[n])
		}
	}
	if err := e.ensureImages(ctx, apps); err != nil {
		return UpResult{}, err
	}
	if err := e.ensureResources(ctx, p, apps); err != nil {
		return UpResult{}, err
	}
	all, err := e.b.List(ctx, backends.ListOptions{Labels: projectLabels(p.Name), All: true})
	if err != nil {
		return UpResult{}, fmt.Errorf("list project %s: %w", p.Name, err)
	}
	res, err := e.orphans(ctx, p, all, o.RemoveOrphans)
	if err != nil {
		return res, err
	}
	existing := map[string][]backends.Container{}
	for _, c := range all {
		if !c.Oneoff() { // a run's container is no replica
			existing[c.App()] = append(existing[c.App()], c)
		}
	}
	if err := e.applyServices(ctx, p, sel, existing, o); err != nil {
		return res, err
	}
	if o.Wait {
		return res, e.waitReady(ctx, p, sel)
	}
	return res, nil
}

// ensureResources creates the networks and volumes the apps use.
func (e *Engine) ensureResources(ctx context.Context, p spec.Project, apps []spec.App) error {
	nets, vols := map[string]bool{}, map[string]bool{}
	for _, a := range apps {
		for _, n := range a.Networks {
			nets[n.Name] = true
		}
		for _, v := range a.Volumes {
			if v.Source != "" {
				vols[v.Source] = true
			}
		}
	}
	netw := e.networks()
	if netw == nil {
		nets = nil // the runtime networks its containers itself
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, key := range sortedSet(nets) {
		n := p.Networks[key]
		g.Go(func() error {
			e.progressOf(ctx).Event(progress.Event{Kind: "Network", ID: n.Name, Status: "Creating"})
			_, err := netw.EnsureNetwork(gctx, backends.NetworkSpec{Project: p.Name, Key: key, Network: n, Labels: map[string]string{
				backends.ComposeProject: p.Name, backends.ComposeNetwork: key,
			}})
			if err != nil {
				e.progressOf(ctx).Event(progress.Event{Kind: "Network", ID: n.Name, Status: "Error", Done: true, Err: true})
				return fmt.Errorf("network %s: %w", key, err)
			}
			e.progressOf(ctx).Event(progress.Event{Kind: "Network", ID: n.Name, Status: "Created", Done: true})
			return nil
		})
	}
	for _, key := range sortedSet(vols) {
		v := p.Volumes[key]
		g.Go(func() error {
			e.progressOf(ctx).Event(progress.Event{Kind: "Volume", ID: v.Name, Status: "Creating"})
			_, err := e.b.EnsureVolume(gctx, backends.VolumeSpec{Project: p.Name, Key: key, Volume: v, Labels: map[string]string{
				backends.ComposeProject: p.Name, backends.ComposeVolume: key,
			}})
			if err != nil {
				e.progressOf(ctx).Event(progress.Event{Kind: "Volume", ID: v.Name, Status: "Error", Done: true, Err: true})
				return fmt.Errorf("volume %s: %w", key, err)
			}
			e.progressOf(ctx).Event(progress.Event{Kind: "Volume", ID: v.Name, Status: "Created", Done: true})
			return nil
		})
	}
	return g.Wait()
}

// orphans finds (and with remove, removes) containers of services no
// longer in the spec.
func (e *Engine) orphans(ctx context.Context, p spec.Project, all []backends.Container, remove bool) (UpResult, error) {
	var res UpResult
	for _, c := range all {
		if _, ok := p.Services[c.App()]; !ok && !c.Oneoff() && c.Labels[LabelCompanionOf] == "" {
			res.Orphans = append(res.Orphans, c)
		}
	}
	if !remove {
		return res, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	wl, _ := e.workloads()
	gone := map[string]bool{}
	for _, c := range res.Orphans {
		if wl != nil && isWorkload(c) {
			if !gone[c.App()] {
				gone[c.App()] = true
				g.Go(func() error { return e.removeWorkload(gctx, wl, p.Name, c.App(), nil) })
			}
			continue
		}
		g.Go(func() error { return e.stopAndRemove(gctx, c, nil) })
	}
	return res, g.Wait()
}

// applyServices converges the selected services, each as soon as its
// dependencies meet their conditions. The first failure cancels the rest.
// existing holds the project's containers by app, listed once up front.
func (e *Engine) applyServices(ctx context.Context, p spec.Project, sel map[string]bool, existing map[string][]backends.Container, o UpOptions) error {
	done := map[string]chan struct{}{}
	recreated := map[string]bool{}
	var mu sync.Mutex
	for n := range sel {
		done[n] = make(chan struct{})
	}
	// Waits on one dependency condition are shared by all dependents.
	var waits sync.Map
	wait := func(ctx context.Context, dep, cond string) error {
		f, _ := waits.LoadOrStore(dep+"|"+cond, sync.OnceValue(func() error { return e.waitCondition(ctx, p, dep, cond) }))
		return f.(func() error)()
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range sortedSet(sel) {
		a := p.Services[name]
		g.Go(func() error {
			restart := false
			for dep, d := range dependencies(a) {
				ch, ok := done[dep]
				if !ok {
					continue // not selected (--no-deps) or optional and absent
				}
				select {
				case <-ch:
				case <-gctx.Done():
					return gctx.Err()
				}
				if o.NoStart {
					continue // nothing runs, nothing to wait for
				}
				if err := wait(gctx, dep, d.Condition); err != nil {
					return fmt.Errorf("service %s: %w", name, err)
				}
				mu.Lock()
				restart = restart || (d.Restart && recreated[dep])
				mu.Unlock()
			}
			res, err := e.converge(gctx, p, a, existing[name], o.convergeOptions(name))
			if err != nil {
				return err
			}
			if restart && !res.recreated {
				if err := e.restartApp(gctx, p.Name, a); err != nil {
					return err
				}
			}
			mu.Lock()
			recreated[name] = res.recreated
			mu.Unlock()
			close(done[name])
			return nil
		})
	}
	err := g.Wait()
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		err = fmt.Errorf("up: %w", err)
	}
	return err
}

// restartApp restarts an app's containers (a depends_on restart: true
// dependency was recreated).
func (e *Engine) restartApp(ctx context.Context, project string, a spec.App) error {
	cs, err := e.b.List(ctx, backends.ListOptions{Labels: appLabels(project, a.Name)})
	if err != nil {
		return err
	}
	for _, c := range slices.DeleteFunc(cs, backends.Container.Oneoff) {
		e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Restarting"})
		if err := e.restartContainer(ctx, c.ID, backends.StopOptions{}); err != nil {
			return fmt.Errorf("restart %s: %w", c.Name, err)
		}
		e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: c.Name, Status: "Restarted", Done: true})
	}
	return nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
