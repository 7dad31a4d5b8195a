package engine

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"
	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
)

// StatsSample is one container's resource usage at one moment.
type StatsSample struct {
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Stats backends.Stats `json:"stats"`
}

// Stats samples the resource usage of the selected services' running
// containers (all of them, stopped too, with all), in name order; a
// backend without stats says so first. Rates (CPU %) come from two
// samples: the caller takes another.
func (e *Engine) Stats(ctx context.Context, project string, services []string, all bool) ([]StatsSample, error) {
	src, err := backends.Want[backends.StatsSource](e.b, backends.FeatureStats, "stats")
	if err != nil {
		return nil, err
	}
	cs, err := e.selected(ctx, project, services, all)
	if err != nil {
		return nil, err
	}
	out := make([]StatsSample, len(cs))
	g, gctx := errgroup.WithContext(ctx)
	// At once: dockerd hands every subscriber the sample of its next
	// one-second tick, so calls in turn would cost a second per batch.
	g.SetLimit(128)
	for i, c := range cs {
		out[i] = StatsSample{ID: c.ID, Name: c.Name}
		if !c.Running() {
			continue // a stopped container uses nothing
		}
		g.Go(func() error {
			st, err := src.Stats(gctx, c.ID)
			if errdefs.IsNotFound(err) || errdefs.IsConflict(err) {
				return nil // it stopped or went meanwhile
			}
			if err != nil {
				return fmt.Errorf("stats of %s: %w", c.Name, err)
			}
			out[i].Stats = st // its own element: no lock
			return nil
		})
	}
	return out, g.Wait()
}
