package fromenv

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/bare"
	"github.com/cornus-dev/cornus/backends/containerd"
	"github.com/cornus-dev/cornus/backends/incus"
	"github.com/cornus-dev/cornus/backends/podman"
)

// linuxOnly are the backends that run containers on this host.
var linuxOnly = map[string]opener{
	containerd.Name: func(ctx context.Context, environ []string) (backends.Backend, error) {
		return containerd.New(ctx, containerd.WithEnviron(environ))
	},
	podman.Name: func(ctx context.Context, environ []string) (backends.Backend, error) {
		return podman.New(ctx, podman.WithEnviron(environ))
	},
	incus.Name: func(ctx context.Context, environ []string) (backends.Backend, error) {
		return incus.New(ctx, incus.WithEnviron(environ))
	},
	bare.Name: func(ctx context.Context, environ []string) (backends.Backend, error) {
		return bare.New(ctx, bare.WithEnviron(environ))
	},
}
