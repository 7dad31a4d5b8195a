package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/filecopy"
	"github.com/cornus-dev/cornus/dockerapi/createbody"
)

// Create makes the container (not started): create with the first
// network, connect the others, copy secrets and configs in. On any failure
// after the container exists it is removed again.
func (b *Backend) Create(ctx context.Context, cs backends.ContainerSpec) (backends.Container, error) {
	cs = withInheritedLabel(cs)
	req, err := createbody.FromSpec(cs, createbody.Options{StartInterval: b.atLeast(apiStartInterval), Subpath: b.atLeast(apiSubpath)})
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if req.ClearCmd {
		img, err := b.cli.ImageInspect(ctx, req.Config.Image)
		if err != nil {
			return backends.Container{}, wrap(err, "create container %s: inspect image %s", cs.Name, req.Config.Image)
		}
		if img.Config != nil && len(img.Config.Entrypoint) > 0 {
			req.Config.Entrypoint = img.Config.Entrypoint
		} else {
			req.Config.Entrypoint = []string{""}
		}
	}
	// The daemon records a connection of a created container to a missing
	// network without complaint (start fails later): check them first.
	for _, n := range req.Connect {
		if _, err := b.cli.NetworkInspect(ctx, n.Name, client.NetworkInspectOptions{}); err != nil {
			return backends.Container{}, wrap(err, "create container %s: network %s", cs.Name, n.Name)
		}
	}
	res, err := b.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:             cs.Name,
		Config:           req.Config,
		HostConfig:       req.HostConfig,
		NetworkingConfig: req.Networking,
		Platform:         req.Platform,
	})
	if err != nil {
		return backends.Container{}, wrap(err, "create container %s", cs.Name)
	}
	c, err := b.finishCreate(ctx, res.ID, cs, req)
	if err != nil {
		// Nothing half-created: remove it even if ctx is done.
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, rmErr := b.cli.ContainerRemove(rmCtx, res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		return backends.Container{}, errors.Join(err, wrap(rmErr, "remove half-created container %s", cs.Name))
	}
	return c, nil
}

func (b *Backend) finishCreate(ctx context.Context, id string, cs backends.ContainerSpec, req createbody.Request) (backends.Container, error) {
	for _, n := range req.Connect {
		if _, err := b.cli.NetworkConnect(ctx, n.Name, client.NetworkConnectOptions{Container: id, EndpointConfig: n.Endpoint}); err != nil {
			return backends.Container{}, wrap(err, "create container %s: connect network %s", cs.Name, n.Name)
		}
	}
	if len(cs.Files) > 0 {
		if err := filecopy.Copy(ctx, b, id, cs.Files); err != nil {
			if cs.ReadOnly {
				return backends.Container{}, fmt.Errorf("create container %s: readOnly: Docker cannot copy secrets and configs into a read-only root filesystem (put their targets on a volume, or drop readOnly): %w", cs.Name, err)
			}
			return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
		}
	}
	d, err := b.Inspect(ctx, id)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	return d.Container, nil
}
