package engine

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/cornus-dev/cornus/backends"
)

// CopyOptions pick the containers of a compose cp, export or commit:
// replica Index of Service, else the first replica to copy from (or to
// export or commit) and every replica to copy to (docker compose's
// choice).
type CopyOptions struct {
	Service string
	Index   int // 1-based; 0: as above
}

// copyTargets are the containers o names, lowest replica first.
func (e *Engine) copyTargets(ctx context.Context, project string, o CopyOptions) (backends.Copier, []backends.Container, error) {
	cp, err := backends.Want[backends.Copier](e.b, backends.FeatureCopy, "cp")
	if err != nil {
		return nil, nil, err
	}
	cs, err := e.replicas(ctx, project, o)
	return cp, cs, err
}

// replicas are the containers of o.Service, lowest replica first, or
// replica o.Index alone; an error when there is none.
func (e *Engine) replicas(ctx context.Context, project string, o CopyOptions) ([]backends.Container, error) {
	cs, err := e.selected(ctx, project, []string{o.Service}, true)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cs, func(a, b backends.Container) int { return a.ReplicaNumber() - b.ReplicaNumber() })
	if o.Index > 0 {
		cs = slices.DeleteFunc(cs, func(c backends.Container) bool { return c.ReplicaNumber() != o.Index })
	}
	if len(cs) == 0 {
		if o.Index > 0 {
			return nil, fmt.Errorf("service %s has no container %d in project %s", o.Service, o.Index, project)
		}
		return nil, fmt.Errorf("service %s has no container in project %s: is it up?", o.Service, project)
	}
	return cs, nil
}

// CopyFrom returns a tar of path in the container o names (its root
// entry named after path's base) and path's stat.
func (e *Engine) CopyFrom(ctx context.Context, project string, o CopyOptions, path string) (io.ReadCloser, backends.PathStat, error) {
	cp, cs, err := e.copyTargets(ctx, project, o)
	if err != nil {
		return nil, backends.PathStat{}, err
	}
	rc, st, err := cp.CopyFrom(ctx, cs[0].ID, path)
	if err != nil {
		return nil, st, fmt.Errorf("copy %s from %s: %w", path, cs[0].Name, err)
	}
	return rc, st, nil
}

// StatPath stats path in the first container o names.
func (e *Engine) StatPath(ctx context.Context, project string, o CopyOptions, path string) (backends.PathStat, error) {
	cp, cs, err := e.copyTargets(ctx, project, o)
	if err != nil {
		return backends.PathStat{}, err
	}
	st, err := cp.StatPath(ctx, cs[0].ID, path)
	if err != nil {
		return st, fmt.Errorf("stat %s in %s: %w", path, cs[0].Name, err)
	}
	return st, nil
}

// CopyTo extracts the tar open returns into directory dir of every
// container o names, one at a time (open is called once for each).
func (e *Engine) CopyTo(ctx context.Context, project string, o CopyOptions, dir string, open func() (io.ReadCloser, error)) error {
	cp, cs, err := e.copyTargets(ctx, project, o)
	if err != nil {
		return err
	}
	for _, c := range cs {
		rc, err := open()
		if err != nil {
			return err
		}
		err = cp.CopyTo(ctx, c.ID, dir, rc)
		_ = rc.Close() // a reader: closed by some backends already
		if err != nil {
			return fmt.Errorf("copy to %s:%s: %w", c.Name, dir, err)
		}
	}
	return nil
}
