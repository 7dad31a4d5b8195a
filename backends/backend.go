package backends

import (
	"context"
	"io"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// Backend runs containers on one runtime. The engine drives it one
// container at a time (replicas, ordering, recreation and healthchecks are
// the engine's job), so every runtime implements the same small verbs.
// Methods take ctx first; errors use github.com/containerd/errdefs classes
// (NotFound, Conflict, InvalidArgument, NotImplemented, Unavailable).
type Backend interface {
	Name() string
	Capabilities() Capabilities
	Containers
	Images
	Networks
	Volumes
	Close() error
}

// Containers is the container lifecycle.
type Containers interface {
	// Create makes a container (not started) from a spec'd app replica.
	Create(ctx context.Context, c ContainerSpec) (Container, error)
	Start(ctx context.Context, id string) error
	// Stop sends the container's stop signal, waits up to the grace period
	// (StopOptions.Timeout, else the container's own), then kills it.
	Stop(ctx context.Context, id string, o StopOptions) error
	Kill(ctx context.Context, id string, signal string) error
	Restart(ctx context.Context, id string, o StopOptions) error
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
}

// Images are the images a runtime holds. Nothing is ever pulled that the
// runtime already has; LoadImage brings offline images in.
type Images interface {
	// InspectImage returns a local image, or an errdefs.NotFound error.
	InspectImage(ctx context.Context, ref string) (Image, error)
	PullImage(ctx context.Context, ref string, progress func(PullProgress)) error
	// LoadImage imports a docker-archive or OCI-layout tar and returns the
	// references it created.
	LoadImage(ctx context.Context, tar io.Reader) ([]string, error)
	ListImages(ctx context.Context) ([]Image, error)
	RemoveImage(ctx context.Context, ref string, force bool) error
}

// Networks are project networks, found again by labels.
type Networks interface {
	// EnsureNetwork returns the network labelled for (project, key),
	// creating it if missing. External networks must exist.
	EnsureNetwork(ctx context.Context, n NetworkSpec) (Network, error)
	ListNetworks(ctx context.Context, o ListOptions) ([]Network, error)
	RemoveNetwork(ctx context.Context, id string) error
}

// Volumes are named volumes, found again by labels.
type Volumes interface {
	EnsureVolume(ctx context.Context, v VolumeSpec) (Volume, error)
	ListVolumes(ctx context.Context, o ListOptions) ([]Volume, error)
	RemoveVolume(ctx context.Context, name string, force bool) error
}

// Optional features, found by type assertion and declared in Capabilities.

// Attacher streams a running container's stdio (docker attach).
type Attacher interface {
	Attach(ctx context.Context, id string, o AttachOptions) error
}

// Pauser freezes and thaws containers.
type Pauser interface {
	Pause(ctx context.Context, id string) error
	Unpause(ctx context.Context, id string) error
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

// EventSource streams container lifecycle events.
type EventSource interface {
	Events(ctx context.Context, o EventOptions) (<-chan Event, <-chan error)
}

// Renamer renames containers (docker rename; docker compose renames a
// container it is about to replace).
type Renamer interface {
	Rename(ctx context.Context, id, name string) error
}

// NetworkConnector attaches running containers to networks.
type NetworkConnector interface {
	Connect(ctx context.Context, network, container string, aliases []string) error
	Disconnect(ctx context.Context, network, container string, force bool) error
}

// ContainerSpec is what Create needs: one replica of an app, with the
// project's networks and volumes so names resolve to runtime ones.
type ContainerSpec struct {
	Project string
	App     spec.App
	Replica int
	// Name is the container name the engine chose (e.g. shop-web-1).
	Name string
	// Labels identify the container (project, app, replica, config hash);
	// the backend stores them and returns them from List and Inspect.
	Labels   map[string]string
	Networks map[string]spec.Network // project networks by key
	Volumes  map[string]spec.Volume  // project volumes by key
	// Files are secrets and configs with their content resolved, to be
	// placed read-only at their targets.
	Files []File
	// StdinOnce closes the container's stdin when the first attached
	// client's stdin ends (docker run -i), instead of ending that
	// client's output stream.
	StdinOnce bool
}

// File is a secret or config file to place in a container.
type File struct {
	Target  string
	Content []byte
	UID     int
	GID     int
	Mode    uint32
}

// Container states, as Docker names them.
const (
	StateCreated    = "created"
	StateRunning    = "running"
	StatePaused     = "paused"
	StateRestarting = "restarting"
	StateExited     = "exited"
	StateDead       = "dead"
	StateRemoving   = "removing"
)

// Health states.
const (
	HealthNone      = ""
	HealthStarting  = "starting"
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
)

// Container is one container as List returns it.
type Container struct {
	ID       string
	Name     string
	Image    string
	ImageID  string
	Command  string
	Labels   map[string]string
	State    string
	Status   string // human: "Up 3 seconds (healthy)", "Exited (0) 2 minutes ago"
	Health   string
	ExitCode int
	Created  time.Time
	Ports    []PortBinding
	// Networks maps network name to the container's endpoint on it.
	Networks map[string]EndpointInfo
	Mounts   []MountPoint
}

// Project, App and Replica read the identity labels.
func (c Container) Project() string { return c.Labels[LabelProject] }
func (c Container) App() string     { return c.Labels[LabelApp] }
func (c Container) Replica() string { return c.Labels[LabelReplica] }

// Running reports whether the container's process is up.
func (c Container) Running() bool {
	return c.State == StateRunning || c.State == StateRestarting || c.State == StatePaused
}

// PortBinding is a published port.
type PortBinding struct {
	HostIP        string
	HostPort      int
	ContainerPort int
	Protocol      string
}

// ContainerDetails is Inspect's answer: List's view plus configuration and
// runtime state.
type ContainerDetails struct {
	Container
	Config       ContainerConfig
	Pid          int
	StartedAt    time.Time
	FinishedAt   time.Time
	RestartCount int
	OOMKilled    bool
	Error        string
	HealthLog    []HealthResult
}

// ContainerConfig is the effective process configuration of a container.
type ContainerConfig struct {
	Hostname      string
	Domainname    string
	User          string
	Env           []string
	Cmd           []string
	Entrypoint    []string
	WorkingDir    string
	TTY           bool
	OpenStdin     bool
	StopSignal    string
	StopTimeout   *int
	Healthcheck   *spec.Healthcheck
	RestartPolicy string
	Privileged    bool
	Init          bool
}

// MountPoint is one mount of a container.
type MountPoint struct {
	Type        string // bind, volume, tmpfs
	Name        string // volume name
	Source      string
	Destination string
	ReadOnly    bool
}

// EndpointInfo is a container's attachment to one network.
type EndpointInfo struct {
	NetworkID   string
	IPAddress   string
	IPPrefixLen int
	Gateway     string
	MacAddress  string
	IPv6Address string
	Aliases     []string
}

// HealthResult is one healthcheck probe.
type HealthResult struct {
	Start    time.Time
	End      time.Time
	ExitCode int
	Output   string
}

// ListOptions filter by labels (all must match; a value of "" only requires
// the key) and, for containers, include stopped ones with All.
type ListOptions struct {
	Labels map[string]string
	All    bool
}

// StopOptions bound a graceful stop. Timeout nil means the container's own
// grace period.
type StopOptions struct {
	Signal  string
	Timeout *time.Duration
}

// RemoveOptions control container removal.
type RemoveOptions struct {
	Force   bool // kill a running container first
	Volumes bool // also remove its anonymous volumes
}

// LogOptions select log output.
type LogOptions struct {
	Follow     bool
	Tail       int // lines from the end; < 0 means all
	Since      time.Time
	Until      time.Time
	Timestamps bool
	Stdout     io.Writer
	Stderr     io.Writer // nil: stderr goes to Stdout
}

// TermSize is a terminal size.
type TermSize struct{ Height, Width uint }

// ExecOptions describe a process to run in a container.
type ExecOptions struct {
	Cmd        []string
	Env        []string
	User       string
	WorkingDir string
	Privileged bool
	TTY        bool
	Stdin      io.Reader // nil: no stdin
	Stdout     io.Writer
	Stderr     io.Writer // ignored with TTY (merged into Stdout)
	Size       *TermSize
	Resize     <-chan TermSize
	// Started, if set, is called with the runtime's exec id once running.
	Started func(execID string)
}

// AttachOptions select which streams of a running container to attach.
type AttachOptions struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Logs   bool // replay output so far first
	Stream bool
	Resize <-chan TermSize
	// Attached, if set, is called once the stream is established, before
	// any output: a caller can then start the container knowing no output
	// will be missed.
	Attached func()
}

// Image is a local image.
type Image struct {
	ID      string
	Tags    []string
	Digests []string
	Size    int64
	Created time.Time
	// LastTagged is when the runtime last tagged the image (pulled or
	// loaded it); zero if unknown. Refresh pull policies compare with it.
	LastTagged   time.Time
	Entrypoint   []string
	Cmd          []string
	Env          []string
	WorkingDir   string
	User         string
	Labels       map[string]string
	ExposedPorts []string
	Healthcheck  *spec.Healthcheck
	Architecture string
	OS           string
}

// PullProgress is one progress event of a pull.
type PullProgress struct {
	ID      string // layer id, or "" for overall status
	Status  string
	Current int64
	Total   int64
}

// NetworkSpec asks for a project network.
type NetworkSpec struct {
	Project string
	Key     string // key in spec.Project.Networks
	Network spec.Network
	Labels  map[string]string
}

// Network is a runtime network.
type Network struct {
	ID       string
	Name     string
	Driver   string
	Labels   map[string]string
	Internal bool
	IPv6     bool
	Subnets  []spec.Subnet
	Created  time.Time
	// Containers maps container IDs to their endpoint on this network.
	Containers map[string]EndpointInfo
}

// VolumeSpec asks for a named volume.
type VolumeSpec struct {
	Project string
	Key     string
	Volume  spec.Volume
	Labels  map[string]string
}

// Volume is a runtime volume.
type Volume struct {
	Name       string
	Driver     string
	Mountpoint string
	Labels     map[string]string
	Options    map[string]string
	Created    time.Time
}

// PathStat describes a file in a container (docker cp).
type PathStat struct {
	Name       string
	Size       int64
	Mode       uint32 // os.FileMode bits
	Mtime      time.Time
	LinkTarget string
}

// Processes is docker top's table.
type Processes struct {
	Titles    []string
	Processes [][]string
}

// EventOptions filter events by container labels. Since replays past
// events; with Until the stream ends once events up to Until were sent
// (past ones included).
type EventOptions struct {
	Since  time.Time
	Until  time.Time
	Labels map[string]string
	// Networks also reports containers connected to or disconnected from a
	// network (Action "connect" or "disconnect", ID the container's, no
	// name, image or labels): that changes a container's inspect but is no
	// container event. Labels do not filter these.
	Networks bool
	// Subscribed, if set, is called once the backend has confirmed the
	// subscription, before any event is sent: every event that happens
	// after Events was called will be delivered. It is not called when the
	// stream fails first, nor by a backend that cannot confirm; callers
	// that need completeness (a read cache) must treat that as unconfirmed.
	Subscribed func()
}

// Event is a container lifecycle event.
type Event struct {
	Time     time.Time
	Action   string // create, start, die, stop, kill, destroy, health_status: healthy, ...; connect, disconnect (EventOptions.Networks)
	ID       string
	Name     string
	Image    string
	Labels   map[string]string
	ExitCode *int
}
