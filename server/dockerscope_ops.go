package server

import (
	"context"
	"fmt"
	"io"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// The optional verbs on one container: each on the tenant's containers
// only (ownID), by the runtime's own implementation (the scope declares
// a feature only where the runtime has it).

func (sc *scoped) Kill(ctx context.Context, id string, sig spec.Signal) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.(backends.Signaler).Kill(ctx, id, sig) })
}

func (sc *scoped) Restart(ctx context.Context, id string, o backends.StopOptions) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.(backends.Restarter).Restart(ctx, id, o) })
}

func (sc *scoped) Pause(ctx context.Context, id string) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.(backends.Pauser).Pause(ctx, id) })
}

func (sc *scoped) Unpause(ctx context.Context, id string) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.(backends.Pauser).Unpause(ctx, id) })
}

func (sc *scoped) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.(backends.Attacher).Attach(ctx, id, o) })
}

func (sc *scoped) CopyFrom(ctx context.Context, id, path string) (rc io.ReadCloser, st backends.PathStat, err error) {
	err = sc.ownID(ctx, id, func(id string) error {
		rc, st, err = sc.b.(backends.Copier).CopyFrom(ctx, id, path)
		return err
	})
	return rc, st, err
}

func (sc *scoped) CopyTo(ctx context.Context, id, dir string, tar io.Reader) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.(backends.Copier).CopyTo(ctx, id, dir, tar) })
}

func (sc *scoped) StatPath(ctx context.Context, id, path string) (st backends.PathStat, err error) {
	err = sc.ownID(ctx, id, func(id string) error { st, err = sc.b.(backends.Copier).StatPath(ctx, id, path); return err })
	return st, err
}

func (sc *scoped) Top(ctx context.Context, id, psArgs string) (ps backends.Processes, err error) {
	err = sc.ownID(ctx, id, func(id string) error { ps, err = sc.b.(backends.ProcessLister).Top(ctx, id, psArgs); return err })
	return ps, err
}

// Rename renames the tenant's container to a name of its own; never a
// replica with a companion (the companion finds it by name).
func (sc *scoped) Rename(ctx context.Context, id, name string) error {
	if err := sc.ownName("container", name); err != nil {
		return err
	}
	d, err := sc.own(ctx, id)
	if err != nil {
		return err
	}
	if d.Labels[engine.LabelHasCompanion] != "" {
		return fmt.Errorf("%w: container %s has a caretaker companion, which finds it by its name", errdefs.ErrPermissionDenied, d.Name)
	}
	return taken("container", name, sc.b.(backends.Renamer).Rename(ctx, d.ID, name))
}

func (sc *scoped) Stats(ctx context.Context, id string) (st backends.Stats, err error) {
	err = sc.ownID(ctx, id, func(id string) error { st, err = sc.b.(backends.StatsSource).Stats(ctx, id); return err })
	return st, err
}

// Events are the runtime's about the tenant's containers.
func (sc *scoped) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	in, errs := sc.b.(backends.EventSource).Events(ctx, o)
	out := make(chan backends.Event)
	go func() {
		defer close(out)
		for {
			var ev backends.Event
			var ok bool
			select {
			case ev, ok = <-in:
			case <-ctx.Done():
				return
			}
			if !ok {
				return
			}
			if !sc.mine(ev.Labels) {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, errs
}
