package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/distribution/reference"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// PushOptions are compose push's.
type PushOptions struct {
	Services       []string // empty: all
	IncludeDeps    bool     // also the services' dependencies
	IgnoreFailures bool     // report a failed push and go on
	// Auth is the login for a registry host (docker.io for Docker Hub),
	// looked up on the client's side; nil: none. The backend uses it
	// alone.
	Auth func(ctx context.Context, host string) (spec.RegistryAuth, error)
}

// Push pushes the images of the selected services that are built and
// named (docker compose's choice: an image that is only pulled came
// from a registry already, and a built one without an image name,
// PROJECT-SERVICE, has no registry to go to).
func (e *Engine) Push(ctx context.Context, p spec.Project, o PushOptions) error {
	if err := e.policy.Check(p); err != nil {
		return err
	}
	sel, err := selectServices(p, o.Services, !o.IncludeDeps)
	if err != nil {
		return err
	}
	pu, err := backends.Want[backends.Pusher](e.b, backends.FeaturePush, "push")
	if err != nil {
		return err
	}
	pw := e.progressOf(ctx)
	done := map[string]bool{}
	for _, n := range p.ServiceNames() {
		a := p.Services[n]
		if !sel[n] {
			continue
		}
		if a.Build == nil || a.Image == p.Name+"-"+n {
			pw.Event(progress.Event{Kind: "Service", ID: n, Status: "Skipped", Done: true})
			continue
		}
		if done[a.Image] {
			continue
		}
		done[a.Image] = true
		err := e.push(ctx, pu, a.Image, o.Auth)
		switch {
		case err == nil:
		case o.IgnoreFailures:
			pw.Event(progress.Event{Kind: "Image", ID: a.Image, Status: "Warning", Text: err.Error(), Done: true})
		default:
			return fmt.Errorf("services.%s: %w", n, err)
		}
	}
	return nil
}

// push pushes one image with its registry's login.
func (e *Engine) push(ctx context.Context, pu backends.Pusher, image string, login func(context.Context, string) (spec.RegistryAuth, error)) error {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return fmt.Errorf("image %q: %w", image, err)
	}
	var auth spec.RegistryAuth
	if login != nil {
		if auth, err = login(ctx, reference.Domain(named)); err != nil {
			return err
		}
	}
	pw := e.progressOf(ctx)
	pw.Event(progress.Event{Kind: "Image", ID: image, Status: "Pushing"})
	if err := pu.PushImage(ctx, image, auth, func(p backends.PullProgress) {
		pw.Event(progress.Event{Kind: "Image", ID: image, Status: "Pushing", Text: strings.TrimSpace(p.ID + " " + p.Status)})
	}); err != nil {
		e.failedKind(ctx, "Image", image, err)
		return err
	}
	pw.Event(progress.Event{Kind: "Image", ID: image, Status: "Pushed", Done: true})
	return nil
}
