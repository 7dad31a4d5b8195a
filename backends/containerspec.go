package backends

import (
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// ContainerSpec is one replica of an app, resolved: every value typed and
// final — runtime names of networks and volumes, the restart policy,
// published ports, namespace sharing, durations, the files to place — so a
// backend maps it onto its runtime and never parses or validates again.
// Resolve builds it from a spec.App.
type ContainerSpec struct {
	Project string
	App     string
	Replica int
	// Name is the container name the engine chose (e.g. shop-web-1).
	Name string
	// Labels identify the container (project, app, replica, config hash)
	// and carry the app's own labels; the backend stores them and returns
	// them from List and Inspect.
	Labels map[string]string

	Image string
	// PullAuth authenticates the runtime's pull of Image (spec.App's).
	PullAuth *spec.RegistryAuth
	Platform *Platform // nil: the runtime's own
	// Entrypoint and Command: nil keeps the image's; empty clears it.
	Entrypoint []string
	Command    []string
	Env        []string // KEY=VALUE, sorted by key
	User       string
	WorkingDir string
	Hostname   string
	Domainname string
	GroupAdd   []string
	TTY        bool
	StdinOpen  bool
	// StdinOnce closes the container's stdin when the first attached
	// client's stdin ends (docker run -i), instead of ending that client's
	// output stream.
	StdinOnce  bool
	Init       bool
	ReadOnly   bool
	Privileged bool

	Restart spec.RestartPolicy // Name "" is "no"
	// StopSignal 0 is the image's or the runtime's default; StopTimeout
	// nil means the runtime's default.
	StopSignal  spec.Signal
	StopTimeout *time.Duration
	// Healthcheck nil keeps the image's; Disabled turns it off.
	Healthcheck *Healthcheck

	// Network is the namespace mode; with the default mode the container
	// joins Networks (none: only the runtime's default network).
	Network    NetworkMode
	Networks   []NetworkAttachment
	Ports      []PortMapping
	Expose     []ExposedPort
	DNS        []string
	DNSSearch  []string
	DNSOptions []string
	ExtraHosts []HostEntry

	Binds   []Bind
	Volumes []VolumeMount
	Tmpfs   []TmpfsMount
	// Files are secrets and configs with their content, placed read-only.
	Files []File

	PID    NamespaceMode
	IPC    NamespaceMode
	UTS    NamespaceMode
	UserNS NamespaceMode
	Cgroup NamespaceMode

	// CapAdd and CapDrop are Docker's names (NET_ADMIN, ALL), checked.
	CapAdd            []string
	CapDrop           []string
	Security          Security
	Devices           []spec.Device
	DeviceCgroupRules []string
	Sysctls           map[string]string
	Ulimits           []Ulimit // sorted by name
	ShmSize           int64
	Resources         Resources
	Logging           *spec.Logging

	// Sidecar is the replica's companion, for backends whose Capabilities
	// say Sidecars (nil: none).
	Sidecar *Sidecar
	// Loopback are ports on the container's loopback whose connections
	// the backend passes to unix sockets on its host, where a companion
	// beside the container serves them (backends.SiblingCompanions: only
	// such backends are given any).
	Loopback []LoopbackSocket
}

// LoopbackSocket is a TCP port on a container's 127.0.0.1 whose
// connections reach the unix socket Socket on the runtime's host.
type LoopbackSocket struct {
	Port   int
	Socket string
}

// Sidecar is a companion run in one unit with its container (a native
// sidecar in the container's pod): it starts first, shares the
// container's network namespace, and the container starts only once Ready
// exits 0 in it.
type Sidecar struct {
	// Name tells it apart from the container inside the unit.
	Name string
	// Spec is the companion, resolved. Its network settings are the
	// unit's: the backend ignores them.
	Spec ContainerSpec
	// Ready runs in the sidecar until it exits 0 (a startup probe).
	Ready []string
	// Shared are the directories the sidecar shares with its container.
	Shared []SharedDir
}

// SharedDir is an empty directory, living as long as the unit, that a
// sidecar and its container both mount.
type SharedDir struct {
	// Name is unique among the unit's shared directories.
	Name string
	// SidecarTarget is where the sidecar mounts it.
	SidecarTarget string
	// Target is where the container mounts it ("": it does not).
	Target   string
	ReadOnly bool // in the container
	// Propagate: the sidecar mounts file systems in it, which the
	// container sees (bidirectional propagation in the sidecar, which
	// needs it privileged; host-to-container in the container).
	Propagate bool
	// Memory: the directory lives in memory (a tmpfs), never on a disk
	// (the credentials the sidecar writes for its container).
	Memory bool
}

// NetworkMode is how a container gets its network namespace.
type NetworkMode struct {
	// Kind: "" (its own, on Networks or the runtime's default network),
	// "none", "host", "bridge" (the runtime's default network by name), or
	// "container" (shares Container's).
	Kind      string
	Container string // a container ID, for Kind "container"
}

// NamespaceMode shares (or not) a namespace: Kind "" is the runtime's
// default, "host" the host's, "container" Container's; other kinds are
// runtime words passed through (IPC "private", "shareable", "none";
// cgroup "private").
type NamespaceMode struct {
	Kind      string
	Container string
}

// NetworkAttachment joins one network, by runtime name.
type NetworkAttachment struct {
	Network string // runtime name
	Key     string // key in the project's networks
	// Aliases are the names peers resolve it by on this network, the
	// service name first.
	Aliases []string
	IPv4    string
	IPv6    string
}

// PortMapping publishes ContainerPort on the host: on HostPort, or the first
// free one of HostPort..HostPortEnd (HostPort 0: any free port).
type PortMapping struct {
	HostIP        string // "" all addresses
	HostPort      int
	HostPortEnd   int // 0: no range
	ContainerPort int
	Protocol      string // tcp, udp or sctp
}

// ExposedPort is a port the container declares without publishing it.
type ExposedPort struct {
	Port     int
	Protocol string
}

// Platform selects an image variant: os/arch[/variant].
type Platform struct {
	OS           string
	Architecture string
	Variant      string
}

// HostEntry is one /etc/hosts line.
type HostEntry struct {
	Host string
	IP   string
}

// Bind mounts a host path.
type Bind struct {
	Source         string
	Target         string
	ReadOnly       bool
	CreateHostPath bool
	Propagation    string
}

// VolumeMount mounts a volume by runtime name; Name "" is an anonymous
// volume (created with Driver and DriverOpts).
type VolumeMount struct {
	// Name is a named volume ("": a new anonymous one).
	Name string
	// Inherited: Name is an anonymous volume of the container this one
	// replaces (VolumeInheritor), now this container's own.
	Inherited  bool
	Target     string
	ReadOnly   bool
	NoCopy     bool
	Subpath    string
	Driver     string
	DriverOpts map[string]string
}

// TmpfsMount mounts a tmpfs.
type TmpfsMount struct {
	Target string
	Size   int64  // bytes; 0 the runtime's default
	Mode   uint32 // 0 the runtime's default
}

// File is a secret or config file to place in a container.
type File struct {
	Target  string
	Content []byte
	UID     int
	GID     int
	Mode    uint32
}

// Healthcheck is a resolved healthcheck: Test is ["CMD", args...] or
// ["CMD-SHELL", script]; zero durations and retries mean the runtime's
// defaults.
type Healthcheck struct {
	Disabled      bool
	Test          []string
	Interval      time.Duration
	Timeout       time.Duration
	StartPeriod   time.Duration
	StartInterval time.Duration
	Retries       int
}

// Ulimit is one resource limit.
type Ulimit struct {
	Name string
	Soft int64
	Hard int64
}

// Resources are cgroup limits and reservations; zero means none.
type Resources struct {
	CPUs              float64
	Memory            int64
	Pids              int64
	CPUReservation    float64
	MemoryReservation int64
	PidsReservation   int64
}
