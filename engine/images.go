package engine

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// imageNeed is what the apps using one image ask of it: the strictest pull
// policy wins (always, then the shortest refresh interval, then missing).
type imageNeed struct {
	kind  string
	every time.Duration
}

func (n imageNeed) stricter(o imageNeed) bool {
	rank := map[string]int{spec.PullAlways: 4, spec.PullRefresh: 3, spec.PullMissing: 2, spec.PullBuild: 2, spec.PullNever: 1}
	if rank[n.kind] != rank[o.kind] {
		return rank[n.kind] > rank[o.kind]
	}
	return n.kind == spec.PullRefresh && n.every < o.every
}

// ensureImages makes every image the apps need present, pulling only what
// the runtime does not have, or what the pull policy asks to refresh:
// always, or refresh when the local image was tagged longer ago than its
// interval (daily, weekly, every_<duration>).
func (e *Engine) ensureImages(ctx context.Context, apps []spec.App) error {
	if e.images() == nil {
		return nil // the runtime fetches images itself
	}
	needs := map[string]imageNeed{}
	startPulls := e.caps.Has(backends.FeatureStartPull)
	for _, a := range apps {
		if a.PullAuth != nil {
			continue // the server's registry holds it: the runtime pulls it with its credential
		}
		kind, every, _ := spec.ParsePullPolicy(a.PullPolicy) // validated
		if kind == spec.PullMissing && startPulls {
			continue // the runtime pulls it if missing when it starts the app
		}
		n := imageNeed{kind: kind, every: every}
		if old, ok := needs[a.Image]; !ok || n.stricter(old) {
			needs[a.Image] = n
		}
	}
	refs := make([]string, 0, len(needs))
	for r := range needs {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	g, ctx := errgroup.WithContext(ctx)
	for _, ref := range refs {
		g.Go(func() error { return e.ensureImage(ctx, ref, needs[ref]) })
	}
	return g.Wait()
}

func (e *Engine) ensureImage(ctx context.Context, ref string, need imageNeed) error {
	present := false
	if need.kind != spec.PullAlways {
		img, err := e.images().InspectImage(ctx, ref)
		switch {
		case err == nil && need.kind == spec.PullRefresh && !img.LastTagged.IsZero() && time.Since(img.LastTagged) < need.every:
			return nil // refreshed recently enough
		case err == nil && need.kind != spec.PullRefresh:
			return nil
		case err == nil:
			present = true // due for a refresh
		case !errdefs.IsNotFound(err):
			return err // the backend names the image
		case need.kind == spec.PullNever:
			return fmt.Errorf("image %s is not present and pull_policy is never: load it with `cornus image load -i FILE.tar`: %w", ref, errdefs.ErrNotFound)
		}
	}
	puller, err := backends.Want[backends.Puller](e.b, backends.FeaturePull, "pulling images")
	switch {
	case err != nil && present:
		return nil // warned about by Warnings: the local image is used
	case err != nil:
		return fmt.Errorf("image %s is not present and %w: load it with `cornus image load -i FILE.tar`", ref, err)
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Image", ID: ref, Status: "Pulling"})
	err = puller.PullImage(ctx, ref, func(pp backends.PullProgress) {
		if pp.Total > 0 {
			e.progressOf(ctx).Event(progress.Event{Kind: "Image", ID: ref, Status: "Pulling", Text: fmt.Sprintf("%d%%", pp.Current*100/pp.Total)})
		}
	})
	switch {
	case err != nil && present:
		// A refresh that cannot reach the registry keeps the local image
		// (offline work goes on) and says so.
		e.progressOf(ctx).Event(progress.Event{Kind: "Image", ID: ref, Status: "Warning", Text: "refresh failed, using the local image: " + err.Error(), Done: true})
		return nil
	case err != nil:
		e.progressOf(ctx).Event(progress.Event{Kind: "Image", ID: ref, Status: "Error", Done: true, Err: true})
		return fmt.Errorf("image %s is not present and could not be pulled (load it with `cornus image load -i FILE.tar`): %w", ref, err)
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Image", ID: ref, Status: "Pulled", Done: true})
	return nil
}

// pullWarnings says, for a backend that cannot pull, which apps' pull
// policies it cannot honor.
func (e *Engine) pullWarnings(a spec.App) []spec.Warning {
	if e.caps.Has(backends.FeaturePull) || e.images() == nil {
		return nil
	}
	kind, _, _ := spec.ParsePullPolicy(a.PullPolicy)
	if kind != spec.PullAlways && kind != spec.PullRefresh {
		return nil
	}
	return []spec.Warning{{Service: a.Name, Field: "pullPolicy", Message: a.PullPolicy + ": the " + e.b.Name() + " backend cannot pull images; the local image is used (load newer ones with `cornus image load`)"}}
}

// builtImage is the ID of the image an app with a build section runs (""
// for other apps, or where the backend lists no images): a rebuild that
// changed it recreates the app's replicas. An image the server's
// registry holds (PullAuth) is named by its digest already, and only the
// nodes have it.
func (e *Engine) builtImage(ctx context.Context, a spec.App) (string, error) {
	if a.Build == nil || a.PullAuth != nil || e.images() == nil {
		return "", nil
	}
	img, err := e.images().InspectImage(ctx, a.Image)
	if err != nil {
		return "", fmt.Errorf("services.%s: built image %s: %w", a.Name, a.Image, err)
	}
	return img.ID, nil
}
