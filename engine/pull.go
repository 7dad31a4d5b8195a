package engine

import (
	"context"
	"fmt"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// PullOptions are compose pull's.
type PullOptions struct {
	Services        []string // empty: all
	IncludeDeps     bool     // also the services' dependencies
	IgnoreBuildable bool     // skip services with a build section
	IgnoreFailures  bool     // report a failed pull and go on
	// Missing pulls only images the backend lacks (--policy missing);
	// else every image is pulled again.
	Missing bool
}

// Pull pulls the selected services' images, as an up would with
// pull_policy always (or missing). A service with a build section that
// cannot be pulled is reported, not failed: up builds it. Where the
// runtime fetches images itself (a cluster's nodes), nothing is pulled.
func (e *Engine) Pull(ctx context.Context, p spec.Project, o PullOptions) error {
	if err := e.policy.Check(p); err != nil {
		return err
	}
	sel, err := selectServices(p, o.Services, !o.IncludeDeps)
	if err != nil {
		return err
	}
	if e.images() == nil {
		e.progressOf(ctx).Event(progress.Event{Kind: "Image", ID: p.Name, Status: "Skipped",
			Text: "the " + e.b.Name() + " backend's nodes pull images when they run them", Done: true})
		return nil
	}
	if _, err := backends.Want[backends.Puller](e.b, backends.FeaturePull, "pull"); err != nil {
		return err
	}
	need := imageNeed{kind: spec.PullAlways}
	if o.Missing {
		need.kind = spec.PullMissing
	}
	done := map[string]bool{}
	for _, n := range p.ServiceNames() {
		a := p.Services[n]
		if !sel[n] || done[a.Image] || a.PullAuth != nil || a.Build != nil && o.IgnoreBuildable {
			continue
		}
		done[a.Image] = true
		err := e.ensureImage(ctx, a.Image, need)
		switch {
		case err == nil:
		case a.Build != nil || o.IgnoreFailures:
			e.progressOf(ctx).Event(progress.Event{Kind: "Image", ID: a.Image, Status: "Warning", Text: err.Error(), Done: true})
		default:
			return fmt.Errorf("services.%s: %w", n, err)
		}
	}
	return nil
}
