package fromenv

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/backends/kubernetes"
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

// opener opens one backend from an environ.
type opener func(ctx context.Context, environ []string) (backends.Backend, error)

// portable are the backends that speak to their runtime over an API and
// run wherever cornus does (a Docker Desktop's dockerd, a cluster);
// linuxOnly (openers_linux.go) adds those that run containers on this
// host.
var portable = map[string]opener{
	"dockerhost": func(ctx context.Context, environ []string) (backends.Backend, error) {
		return dockerhost.New(ctx, dockerhost.WithEnviron(environ))
	},
	kubernetes.Name: func(ctx context.Context, environ []string) (backends.Backend, error) {
		return kubernetes.New(ctx, kubernetes.WithEnviron(environ))
	},
}

// Open connects to the selected backend.
func Open(ctx context.Context, environ []string) (backends.Backend, error) {
	name := Selected(environ)
	if name == "k8s" {
		name = kubernetes.Name
	}
	if open, ok := portable[name]; ok {
		return open(ctx, environ)
	}
	if open, ok := linuxOnly[name]; ok {
		return open(ctx, environ)
	}
	if slices.Contains(names, name) {
		return nil, fmt.Errorf("%s=%s: the %s backend runs containers on a Linux host, and this is %s: use dockerhost or kubernetes here, "+
			"or a cornus server on Linux (--server URL, or CORNUS_SERVER): %w", EnvBackend, name, name, runtime.GOOS, errdefs.ErrNotImplemented)
	}
	return nil, fmt.Errorf("%s=%q is not a backend: use one of %s: %w", EnvBackend, name, strings.Join(names, ", "), errdefs.ErrInvalidArgument)
}
