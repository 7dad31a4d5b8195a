package backends

import (
	"context"
	"fmt"
	"io"

	"github.com/containerd/errdefs"
)

// Optional features: each is an interface a backend may implement and must
// then declare in Capabilities().Features, so the engine, the proxy and the
// CLI can say "not supported by the X backend" before trying (Want).

// Feature names an optional interface.
type Feature string

// The optional features.
const (
	FeatureImages   Feature = "images"   // Images
	FeaturePull     Feature = "pull"     // Puller
	FeatureNetworks Feature = "networks" // Networks
	FeatureConnect  Feature = "connect"  // NetworkConnector
	FeatureKill     Feature = "kill"     // Signaler
	FeatureRestart  Feature = "restart"  // Restarter
	FeaturePause    Feature = "pause"    // Pauser
	FeatureAttach   Feature = "attach"   // Attacher
	FeatureCopy     Feature = "copy"     // Copier
	FeatureTop      Feature = "top"      // ProcessLister
	FeatureRename   Feature = "rename"   // Renamer
	FeatureEvents   Feature = "events"   // EventSource
	FeatureStats    Feature = "stats"    // StatsSource
)

// AllFeatures lists every optional feature.
var AllFeatures = []Feature{
	FeatureImages, FeaturePull, FeatureNetworks, FeatureConnect, FeatureKill, FeatureRestart, FeaturePause,
	FeatureAttach, FeatureCopy, FeatureTop, FeatureRename, FeatureEvents, FeatureStats,
}

// Want returns b as the optional interface T when b declares feature f,
// else an errdefs NotImplemented error naming what and the backend.
func Want[T any](b Backend, f Feature, what string) (T, error) {
	var zero T
	if !b.Capabilities().Has(f) {
		return zero, NotSupported(b, what)
	}
	t, ok := b.(T)
	if !ok {
		return zero, fmt.Errorf("the %s backend declares %s but does not implement it: %w", b.Name(), f, errdefs.ErrNotImplemented)
	}
	return t, nil
}

// NotSupported is the errdefs NotImplemented error for what the backend
// does not offer.
func NotSupported(b Backend, what string) error {
	return fmt.Errorf("%s is not supported by the %s backend: %w", what, b.Name(), errdefs.ErrNotImplemented)
}

// Images are the images a runtime holds. Nothing is ever pulled that the
// runtime already has; LoadImage brings offline images in.
type Images interface {
	// InspectImage returns a local image, or an errdefs.NotFound error.
	InspectImage(ctx context.Context, ref string) (Image, error)
	// LoadImage imports a docker-archive or OCI-layout tar and returns the
	// references it created.
	LoadImage(ctx context.Context, tar io.Reader) ([]string, error)
	ListImages(ctx context.Context) ([]Image, error)
	RemoveImage(ctx context.Context, ref string, force bool) error
}

// Puller fetches images from registries.
type Puller interface {
	PullImage(ctx context.Context, ref string, progress func(PullProgress)) error
}

// Networks are project networks, found again by labels.
type Networks interface {
	// EnsureNetwork returns the network labelled for (project, key),
	// creating it if missing. External networks must exist.
	EnsureNetwork(ctx context.Context, n NetworkSpec) (Network, error)
	ListNetworks(ctx context.Context, o ListOptions) ([]Network, error)
	RemoveNetwork(ctx context.Context, id string) error
}

// NetworkConnector attaches running containers to networks.
type NetworkConnector interface {
	Connect(ctx context.Context, network, container string, aliases []string) error
	Disconnect(ctx context.Context, network, container string, force bool) error
}

// Signaler sends a signal to a container's main process.
type Signaler interface {
	Kill(ctx context.Context, id string, signal string) error
}

// Restarter restarts a container in one step (stop with grace, then
// start); without it the engine stops and starts.
type Restarter interface {
	Restart(ctx context.Context, id string, o StopOptions) error
}

// Pauser freezes and thaws containers.
type Pauser interface {
	Pause(ctx context.Context, id string) error
	Unpause(ctx context.Context, id string) error
}

// Attacher streams a running container's stdio (docker attach).
type Attacher interface {
	Attach(ctx context.Context, id string, o AttachOptions) error
}

// Copier moves files in and out of containers as tar streams.
type Copier interface {
	// CopyFrom returns a tar of path and the stat of path itself.
	CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, PathStat, error)
	// CopyTo extracts a tar into the directory dir.
	CopyTo(ctx context.Context, id, dir string, tar io.Reader) error
	StatPath(ctx context.Context, id, path string) (PathStat, error)
}

// ProcessLister lists a container's processes (docker top).
type ProcessLister interface {
	Top(ctx context.Context, id string, psArgs string) (Processes, error)
}

// Renamer renames containers (docker rename; docker compose renames a
// container it is about to replace).
type Renamer interface {
	Rename(ctx context.Context, id, name string) error
}

// EventSource streams container lifecycle events.
type EventSource interface {
	Events(ctx context.Context, o EventOptions) (<-chan Event, <-chan error)
}

// StatsSource samples a container's resource usage.
type StatsSource interface {
	Stats(ctx context.Context, id string) (Stats, error)
}
