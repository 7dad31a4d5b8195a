package backends

import (
	"context"
	"fmt"
	"io"
	"net"
	"reflect"
	"slices"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// Optional features: each is an interface a backend may implement. A
// backend states its features once, by implementing them: its
// Capabilities().Features is FeaturesOf(b), so the engine, the server, the
// proxy and the CLI can say "not supported by the X backend" before
// trying (Want), and never ask a backend's name.

// Feature names an optional interface.
type Feature string

// The optional features.
const (
	FeatureImages   Feature = "images"   // Images
	FeaturePull     Feature = "pull"     // Puller
	FeaturePush     Feature = "push"     // Pusher
	FeatureNetworks Feature = "networks" // Networks
	FeatureConnect  Feature = "connect"  // NetworkConnector
	FeatureKill     Feature = "kill"     // Signaler
	FeatureRestart  Feature = "restart"  // Restarter
	FeaturePause    Feature = "pause"    // Pauser
	FeatureAttach   Feature = "attach"   // Attacher
	FeatureCopy     Feature = "copy"     // Copier
	FeatureExport   Feature = "export"   // Exporter
	FeatureCommit   Feature = "commit"   // Committer
	FeatureTop      Feature = "top"      // ProcessLister
	FeatureRename   Feature = "rename"   // Renamer
	FeatureEvents   Feature = "events"   // EventSource
	FeatureStats    Feature = "stats"    // StatsSource
	FeatureBuild    Feature = "build"    // Builder (build.go)
	FeatureContent  Feature = "content"  // ImageContenter (build.go)

	FeatureWorkloads   Feature = "workloads"    // Workloads (workloads.go)
	FeatureLocalMounts Feature = "local-mounts" // LocalMounter
	FeatureHostReach   Feature = "host-reach"   // HostReachChecker
	FeatureDial        Feature = "dial"         // ContainerDialer
	FeatureRemoteMode  Feature = "remote-mode"  // RemoteModer
	FeatureInherit     Feature = "inherit"      // VolumeInheritor
	FeatureRootless    Feature = "rootless"     // RootlessReporter
	FeatureStartPull   Feature = "start-pull"   // StartPuller
)

// optional pairs each feature with the test for its interface, in
// AllFeatures order.
var optional = []struct {
	feature Feature
	iface   reflect.Type
}{
	{FeatureImages, reflect.TypeFor[Images]()},
	{FeaturePull, reflect.TypeFor[Puller]()},
	{FeaturePush, reflect.TypeFor[Pusher]()},
	{FeatureNetworks, reflect.TypeFor[Networks]()},
	{FeatureConnect, reflect.TypeFor[NetworkConnector]()},
	{FeatureKill, reflect.TypeFor[Signaler]()},
	{FeatureRestart, reflect.TypeFor[Restarter]()},
	{FeaturePause, reflect.TypeFor[Pauser]()},
	{FeatureAttach, reflect.TypeFor[Attacher]()},
	{FeatureCopy, reflect.TypeFor[Copier]()},
	{FeatureExport, reflect.TypeFor[Exporter]()},
	{FeatureCommit, reflect.TypeFor[Committer]()},
	{FeatureTop, reflect.TypeFor[ProcessLister]()},
	{FeatureRename, reflect.TypeFor[Renamer]()},
	{FeatureEvents, reflect.TypeFor[EventSource]()},
	{FeatureStats, reflect.TypeFor[StatsSource]()},
	{FeatureBuild, reflect.TypeFor[Builder]()},
	{FeatureContent, reflect.TypeFor[ImageContenter]()},
	{FeatureWorkloads, reflect.TypeFor[Workloads]()},
	{FeatureLocalMounts, reflect.TypeFor[LocalMounter]()},
	{FeatureHostReach, reflect.TypeFor[HostReachChecker]()},
	{FeatureDial, reflect.TypeFor[ContainerDialer]()},
	{FeatureRemoteMode, reflect.TypeFor[RemoteModer]()},
	{FeatureInherit, reflect.TypeFor[VolumeInheritor]()},
	{FeatureRootless, reflect.TypeFor[RootlessReporter]()},
	{FeatureStartPull, reflect.TypeFor[StartPuller]()},
}

// AllFeatures lists every optional feature.
var AllFeatures = func() []Feature {
	out := make([]Feature, len(optional))
	for i, o := range optional {
		out[i] = o.feature
	}
	return out
}()

// Implements reports whether b implements the interface of feature f.
func Implements(b Backend, f Feature) bool {
	for _, o := range optional {
		if o.feature == f {
			return b != nil && reflect.TypeOf(b).Implements(o.iface)
		}
	}
	return false
}

// FeaturesOf is what a backend's Capabilities().Features says: every
// optional interface b implements, in AllFeatures order, less except — an
// interface the type has that the runtime it talks to cannot offer (a
// daemon too old for it); each exception says why beside the call.
func FeaturesOf(b Backend, except ...Feature) []Feature {
	var out []Feature
	for _, o := range optional {
		if Implements(b, o.feature) && !slices.Contains(except, o.feature) {
			out = append(out, o.feature)
		}
	}
	return out
}

// Unimplemented names, for each optional interface that b's type has a
// method of but does not implement (a signature that drifted from the
// interface's), the interface and that method: such a feature would drop
// out of FeaturesOf without a word.
func Unimplemented(b Backend) []string {
	var out []string
	t := reflect.TypeOf(b)
	if t == nil {
		return nil
	}
	for _, o := range optional {
		if t.Implements(o.iface) {
			continue
		}
		for i := range o.iface.NumMethod() {
			if m := o.iface.Method(i); hasMethod(t, m.Name) {
				out = append(out, fmt.Sprintf("%s has %s yet does not implement %s (feature %s): a method is missing or has another signature than the interface's", t, m.Name, o.iface.Name(), o.feature))
				break
			}
		}
	}
	return out
}

func hasMethod(t reflect.Type, name string) bool {
	_, ok := t.MethodByName(name)
	return ok
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

// StartPuller is a backend whose runtime pulls a missing image itself
// when it starts a container, and fails the start, naming the image, when
// it cannot (Kubernetes: imagePullPolicy IfNotPresent). The engine leaves
// it the images of the default pull policy (missing): asking whether an
// image is there first would cost it as much as the pull.
type StartPuller interface {
	PullsOnStart()
}

// Pusher sends images to registries.
type Pusher interface {
	// PushImage pushes the local image ref to the registry its name
	// says, with auth alone (zero: anonymous): never credentials of the
	// runtime's host, which a server's tenant must not borrow.
	PushImage(ctx context.Context, ref string, auth spec.RegistryAuth, progress func(PullProgress)) error
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

// Signaler sends a signal to a container's main process (SIGKILL when 0).
type Signaler interface {
	Kill(ctx context.Context, id string, signal spec.Signal) error
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

// Exporter writes a container's whole filesystem as one tar (docker
// export): the image's layers and the container's changes, no volumes.
type Exporter interface {
	Export(ctx context.Context, id string) (io.ReadCloser, error)
}

// Committer makes an image of a container: its image and its changes
// (docker commit).
type Committer interface {
	// Commit returns the new image's ID.
	Commit(ctx context.Context, id string, o CommitOptions) (string, error)
}

// CommitOptions are docker commit's: the new image's reference (none: an
// untagged image), author, message, Dockerfile instructions applied to
// its configuration (CMD, ENV, LABEL, ...), and whether the container is
// paused while its changes are read.
type CommitOptions struct {
	Reference string
	Author    string
	Message   string
	Changes   []string
	NoPause   bool
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

// LocalMounter is a backend whose runtime shares this host's mounts: a
// `cornus serve` session's client-local mount is a bind of the server's
// mountpoint (dockerhost, bare). Outside a remote mode (RemoteModer) a
// backend without it refuses client-local mounts.
type LocalMounter interface {
	// CheckLocalMounts says why the backend cannot take client-local
	// mounts as host binds now, nil when it can.
	CheckLocalMounts(ctx context.Context) error
}

// HostReachChecker is a backend whose containers' networks may be out of
// this host's reach (a rootless podman): port-forward and tunnel ask it
// before dialing a container's address.
type HostReachChecker interface {
	// CheckHostReach refuses what (a feature, for the message) when this
	// host cannot reach the containers' networks.
	CheckHostReach(ctx context.Context, what string) error
}

// ContainerDialer is a backend that reaches its containers' ports itself
// (kubernetes: pods/portforward) rather than by their addresses.
type ContainerDialer interface {
	DialContainer(ctx context.Context, id string, port int, proto string) (net.Conn, error)
}

// RemoteModer is a backend with a remote mode: its runtime shares neither
// this host's mounts nor its networks, so `cornus serve` gives every
// replica a caretaker companion that does next to the app what the server
// does on its host otherwise (server/remote.go). The backend reads the
// variable that turns it on from the environ it was opened with.
type RemoteModer interface {
	// RemoteMode reports whether remote mode is on and the variable that
	// turns it on (set to 1), for messages.
	RemoteMode() (on bool, variable string)
}

// RemoteMountsOnly is a RemoteModer whose runtime is the server's own
// host (bare): its remote mode gives a companion only to the replicas
// with client-local mounts or credentials, and the server reaches the
// workloads' networks itself (port-forward, tunnel). A property of the
// RemoteModer, not a feature of its own.
type RemoteMountsOnly interface {
	RemoteMountsOnly() bool
}

// SiblingCompanions is a RemoteModer whose runtime cannot put a
// companion in its app's network namespace (incus: every instance owns
// its own): the companion runs beside the app, on its networks, and
// dials it by the address the server gives; it shares a volume with the
// app for sockets (the agent, docker roles). What needs the app's
// namespace, or mounts propagated into it, is refused in its remote mode
// (client-local mounts, credentials, egress). A property of the
// RemoteModer, not a feature of its own.
type SiblingCompanions interface {
	SiblingCompanions() bool
}

// VolumeInheritor is a backend whose containers can hand their anonymous
// volumes to the containers that replace them, as docker compose does on
// a recreate (up -V renews them instead): AnonymousVolumes names them,
// and Create mounts a VolumeMount marked Inherited by its name and owns
// it as one it made (Remove with Volumes removes it).
type VolumeInheritor interface {
	// AnonymousVolumes maps the target of each anonymous volume of
	// container id (the image's VOLUMEs too) to the volume's name.
	AnonymousVolumes(ctx context.Context, id string) (map[string]string, error)
}

// RootlessReporter is a backend that can tell whether its runtime runs
// rootless (as the runtime says, never guessed).
type RootlessReporter interface {
	Rootless(ctx context.Context) (bool, error)
}
