package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/containerd/errdefs"
	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// ensureImages makes every image the apps need present, pulling only what
// the runtime does not have (or what pullPolicy always asks to refresh).
func (e *Engine) ensureImages(ctx context.Context, apps []spec.App) error {
	policy := map[string]string{}
	for _, a := range apps {
		if a.PullPolicy == "always" || policy[a.Image] == "" {
			policy[a.Image] = a.PullPolicy
		}
	}
	refs := make([]string, 0, len(policy))
	for r := range policy {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	g, ctx := errgroup.WithContext(ctx)
	for _, ref := range refs {
		g.Go(func() error {
			pol := policy[ref]
			if pol != "always" {
				_, err := e.b.InspectImage(ctx, ref)
				if err == nil {
					return nil
				}
				if !errdefs.IsNotFound(err) {
					return err // the backend names the image
				}
				if pol == "never" {
					return fmt.Errorf("image %s is not present and pull_policy is never: load it with `cornus image load -i FILE.tar`: %w", ref, errdefs.ErrNotFound)
				}
			}
			e.progress.Event(progress.Event{Kind: "Image", ID: ref, Status: "Pulling"})
			err := e.b.PullImage(ctx, ref, func(pp backends.PullProgress) {
				if pp.Total > 0 {
					e.progress.Event(progress.Event{Kind: "Image", ID: ref, Status: "Pulling", Text: fmt.Sprintf("%d%%", pp.Current*100/pp.Total)})
				}
			})
			if err != nil {
				e.progress.Event(progress.Event{Kind: "Image", ID: ref, Status: "Error", Done: true, Err: true})
				return fmt.Errorf("image %s is not present and could not be pulled (load it with `cornus image load -i FILE.tar`): %w", ref, err)
			}
			e.progress.Event(progress.Event{Kind: "Image", ID: ref, Status: "Pulled", Done: true})
			return nil
		})
	}
	return g.Wait()
}
