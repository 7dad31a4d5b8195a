package engine

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

// restartContainer restarts with the backend's Restarter, else by stopping
// and starting (what a restart is).
func (e *Engine) restartContainer(ctx context.Context, id string, o backends.StopOptions) error {
	if r, err := backends.Want[backends.Restarter](e.b, backends.FeatureRestart, "restart"); err == nil {
		return r.Restart(ctx, id, o)
	}
	if err := e.b.Stop(ctx, id, o); err != nil {
		return err
	}
	return e.b.Start(ctx, id)
}

// networks is the backend's network management, or nil for a runtime
// that has none (its containers then get its own default networking).
func (e *Engine) networks() backends.Networks {
	n, err := backends.Want[backends.Networks](e.b, backends.FeatureNetworks, "networks")
	if err != nil {
		return nil
	}
	return n
}

// images is the backend's image store, or nil for a runtime that fetches
// images itself (a cluster pulls on its nodes).
func (e *Engine) images() backends.Images {
	i, err := backends.Want[backends.Images](e.b, backends.FeatureImages, "images")
	if err != nil {
		return nil
	}
	return i
}

// inspectImage inspects an image where the backend keeps images.
func (e *Engine) inspectImage(ctx context.Context, ref string) (backends.Image, error) {
	imgs := e.images()
	if imgs == nil {
		return backends.Image{}, backends.NotSupported(e.b, "inspecting images")
	}
	return imgs.InspectImage(ctx, ref)
}
