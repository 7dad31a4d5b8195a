package fromenv

import (
	"context"
	"fmt"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/bare"
	"github.com/cornus-dev/cornus/backends/containerd"
	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/backends/incus"
	"github.com/cornus-dev/cornus/backends/kubernetes"
	"github.com/cornus-dev/cornus/backends/podman"
)

// EnvBackend selects the backend.
const EnvBackend = "CORNUS_DEPLOY_BACKEND"

// Default is the backend used when EnvBackend is unset.
const Default = "dockerhost"

// Names are the valid EnvBackend values (k8s is an alias of kubernetes).
var names = []string{"dockerhost", "podman", "containerd", "bare", "incus", "kubernetes", "k8s"}

// Names returns the valid backend names.
func Names() []string { return append([]string(nil), names...) }

// Selected returns the backend name the environment selects.
func Selected(environ []string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, EnvBackend+"="); ok && v != "" {
			return v
		}
	}
	return Default
}

// Open connects to the selected backend.
func Open(ctx context.Context, environ []string) (backends.Backend, error) {
	name := Selected(environ)
	switch name {
	case "dockerhost":
		return dockerhost.New(ctx, dockerhost.WithEnviron(environ))
	case containerd.Name:
		return containerd.New(ctx, containerd.WithEnviron(environ))
	case podman.Name:
		return podman.New(ctx, podman.WithEnviron(environ))
	case incus.Name:
		return incus.New(ctx, incus.WithEnviron(environ))
	case kubernetes.Name, "k8s":
		return kubernetes.New(ctx, kubernetes.WithEnviron(environ))
	case bare.Name:
		return bare.New(ctx, bare.WithEnviron(environ))
	}
	return nil, fmt.Errorf("%s=%q is not a backend: use one of %s: %w", EnvBackend, name, strings.Join(names, ", "), errdefs.ErrInvalidArgument)
}
