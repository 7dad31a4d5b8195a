package backends

import (
	"context"
)

// Backend runs containers on one runtime: the verbs every runtime has. The
// engine drives it one container at a time (replicas, ordering, recreation
// and, where the runtime has none, healthchecks are the engine's job).
// Everything else a runtime may offer is an optional interface (optional.go)
// declared in Capabilities().Features. Methods take ctx first; errors use
// github.com/containerd/errdefs classes (NotFound, Conflict,
// InvalidArgument, NotImplemented, Unavailable).
type Backend interface {
	Name() string
	Capabilities() Capabilities

	// Create makes a container (not started) from a resolved spec.
	Create(ctx context.Context, c ContainerSpec) (Container, error)
	Start(ctx context.Context, id string) error
	// Stop sends the stop signal (StopOptions.Signal, else the container's),
	// waits up to the grace period (StopOptions.Timeout, else the
	// container's own), then kills it.
	Stop(ctx context.Context, id string, o StopOptions) error
	Remove(ctx context.Context, id string, o RemoveOptions) error
	// List returns containers whose labels match every filter label.
	List(ctx context.Context, o ListOptions) ([]Container, error)
	Inspect(ctx context.Context, id string) (ContainerDetails, error)
	// Wait blocks until the container is not running and returns its exit code.
	Wait(ctx context.Context, id string) (int, error)
	// Logs copies the container's output to o.Stdout/o.Stderr until done
	// (or, with Follow, until the container stops or ctx ends).
	Logs(ctx context.Context, id string, o LogOptions) error
	// Exec runs a process in a running container and returns its exit code.
	Exec(ctx context.Context, id string, o ExecOptions) (int, error)

	// Volumes are named volumes, found again by labels.
	EnsureVolume(ctx context.Context, v VolumeSpec) (Volume, error)
	ListVolumes(ctx context.Context, o ListOptions) ([]Volume, error)
	RemoveVolume(ctx context.Context, name string, force bool) error

	Close() error
}
