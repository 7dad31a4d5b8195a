package spec

import (
	"maps"
	"slices"
)

// Project is a set of apps deployed together, plus the networks and volumes
// they share. It is the unit the engine applies and tears down.
type Project struct {
	Name     string             `yaml:"name" json:"name"`
	Services map[string]App     `yaml:"services" json:"services"`
	Networks map[string]Network `yaml:"networks,omitempty" json:"networks,omitempty"`
	Volumes  map[string]Volume  `yaml:"volumes,omitempty" json:"volumes,omitempty"`
	// ConfigFiles and WorkingDir are the Compose files the project was
	// loaded from and its directory, on the machine that loaded them:
	// labels for compose ls, never read as paths.
	ConfigFiles []string `yaml:"-" json:"configFiles,omitempty"`
	WorkingDir  string   `yaml:"-" json:"workingDir,omitempty"`
}

// RegistryAuth is a credential for one registry host.
type RegistryAuth struct {
	Server   string // host[:port]
	Username string
	Password string
	// IdentityToken is an OAuth refresh token for the registry's token
	// service, in place of a password (docker login's identity token).
	IdentityToken string
}

// App describes one service: an image run as one or more identical replicas.
// Name is the key it has in Project.Services.
type App struct {
	Name string `yaml:"-" json:"-"`

	Image string `yaml:"image" json:"image"`
	// PullAuth is how the runtime authenticates pulling Image: set by
	// cornus serve alone, for an image its own registry holds (a tenant's
	// load or push) on a backend whose nodes pull it; never read from a
	// file or a request.
	PullAuth      *RegistryAuth     `yaml:"-" json:"-"`
	Build         *Build            `yaml:"build,omitempty" json:"build,omitempty"`
	PullPolicy    string            `yaml:"pullPolicy,omitempty" json:"pullPolicy,omitempty"`
	Platform      string            `yaml:"platform,omitempty" json:"platform,omitempty"`
	Replicas      *int              `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	Update        *UpdateConfig     `yaml:"update,omitempty" json:"update,omitempty"`
	Restart       string            `yaml:"restart,omitempty" json:"restart,omitempty"`
	ContainerName string            `yaml:"containerName,omitempty" json:"containerName,omitempty"`
	Command       Command           `yaml:"command,omitempty" json:"command,omitzero"`
	Entrypoint    Command           `yaml:"entrypoint,omitempty" json:"entrypoint,omitzero"`
	WorkingDir    string            `yaml:"workingDir,omitempty" json:"workingDir,omitempty"`
	User          string            `yaml:"user,omitempty" json:"user,omitempty"`
	GroupAdd      []string          `yaml:"groupAdd,omitempty" json:"groupAdd,omitempty"`
	Env           map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	Labels        map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Hostname      string            `yaml:"hostname,omitempty" json:"hostname,omitempty"`
	Domainname    string            `yaml:"domainname,omitempty" json:"domainname,omitempty"`

	Ports       []Port              `yaml:"ports,omitempty" json:"ports,omitempty"`
	Expose      []string            `yaml:"expose,omitempty" json:"expose,omitempty"`
	NetworkMode string              `yaml:"networkMode,omitempty" json:"networkMode,omitempty"`
	Networks    []NetworkAttachment `yaml:"networks,omitempty" json:"networks,omitempty"`
	DNS         []string            `yaml:"dns,omitempty" json:"dns,omitempty"`
	DNSSearch   []string            `yaml:"dnsSearch,omitempty" json:"dnsSearch,omitempty"`
	DNSOptions  []string            `yaml:"dnsOptions,omitempty" json:"dnsOptions,omitempty"`
	ExtraHosts  map[string][]string `yaml:"extraHosts,omitempty" json:"extraHosts,omitempty"`

	Mounts  []Mount       `yaml:"mounts,omitempty" json:"mounts,omitempty"`
	Volumes []VolumeMount `yaml:"volumes,omitempty" json:"volumes,omitempty"`
	Tmpfs   []Tmpfs       `yaml:"tmpfs,omitempty" json:"tmpfs,omitempty"`
	Secrets []FileMount   `yaml:"secrets,omitempty" json:"secrets,omitempty"`
	Configs []FileMount   `yaml:"configs,omitempty" json:"configs,omitempty"`

	Healthcheck *Healthcheck          `yaml:"healthcheck,omitempty" json:"healthcheck,omitempty"`
	DependsOn   map[string]Dependency `yaml:"dependsOn,omitempty" json:"dependsOn,omitempty"`
	Hooks       *Hooks                `yaml:"hooks,omitempty" json:"hooks,omitempty"`

	Resources       *Resources        `yaml:"resources,omitempty" json:"resources,omitempty"`
	StopSignal      string            `yaml:"stopSignal,omitempty" json:"stopSignal,omitempty"`
	StopGracePeriod *Duration         `yaml:"stopGracePeriod,omitempty" json:"stopGracePeriod,omitempty"`
	Init            *bool             `yaml:"init,omitempty" json:"init,omitempty"`
	TTY             bool              `yaml:"tty,omitempty" json:"tty,omitempty"`
	StdinOpen       bool              `yaml:"stdinOpen,omitempty" json:"stdinOpen,omitempty"`
	ReadOnly        bool              `yaml:"readOnly,omitempty" json:"readOnly,omitempty"`
	Privileged      bool              `yaml:"privileged,omitempty" json:"privileged,omitempty"`
	CapAdd          []string          `yaml:"capAdd,omitempty" json:"capAdd,omitempty"`
	CapDrop         []string          `yaml:"capDrop,omitempty" json:"capDrop,omitempty"`
	SecurityOpt     []string          `yaml:"securityOpt,omitempty" json:"securityOpt,omitempty"`
	Devices         []Device          `yaml:"devices,omitempty" json:"devices,omitempty"`
	Sysctls         map[string]string `yaml:"sysctls,omitempty" json:"sysctls,omitempty"`
	Ulimits         map[string]Ulimit `yaml:"ulimits,omitempty" json:"ulimits,omitempty"`
	ShmSize         Bytes             `yaml:"shmSize,omitempty" json:"shmSize,omitempty"`
	PidMode         string            `yaml:"pidMode,omitempty" json:"pidMode,omitempty"`
	IpcMode         string            `yaml:"ipcMode,omitempty" json:"ipcMode,omitempty"`
	// UTSMode, UsernsMode and CgroupnsMode share the host's namespace when
	// "host" (cgroupnsMode also takes "private").
	UTSMode           string   `yaml:"utsMode,omitempty" json:"utsMode,omitempty"`
	UsernsMode        string   `yaml:"usernsMode,omitempty" json:"usernsMode,omitempty"`
	CgroupnsMode      string   `yaml:"cgroupnsMode,omitempty" json:"cgroupnsMode,omitempty"`
	DeviceCgroupRules []string `yaml:"deviceCgroupRules,omitempty" json:"deviceCgroupRules,omitempty"`
	Logging           *Logging `yaml:"logging,omitempty" json:"logging,omitempty"`

	Egress *Egress `yaml:"egress,omitempty" json:"egress,omitempty"`
	// Credentials are what the app may ask its client for (credential.go).
	Credentials []Credential `yaml:"credentials,omitempty" json:"credentials,omitempty"`
	// Docker gives the app a Docker Engine API endpoint (DOCKER_HOST) that
	// deploys siblings on the same server as the deploying tenant (the
	// caretaker's docker role, remote mode).
	Docker       bool          `yaml:"docker,omitempty" json:"docker,omitempty"`
	Devcontainer *Devcontainer `yaml:"devcontainer,omitempty" json:"devcontainer,omitempty"`
	// Watch are Compose's develop.watch rules: what compose watch does
	// when the client's files change. Read by the client alone.
	Watch []WatchRule `yaml:"watch,omitempty" json:"watch,omitempty"`
}

// Watch actions.
const (
	WatchSync        = "sync"
	WatchRebuild     = "rebuild"
	WatchRestart     = "restart"
	WatchSyncRestart = "sync+restart"
	WatchSyncExec    = "sync+exec"
)

// WatchRule is one develop.watch rule.
type WatchRule struct {
	Path        string   `yaml:"path" json:"path"` // absolute, on the client
	Action      string   `yaml:"action" json:"action"`
	Target      string   `yaml:"target,omitempty" json:"target,omitempty"` // in the container (sync actions)
	Ignore      []string `yaml:"ignore,omitempty" json:"ignore,omitempty"`
	Include     []string `yaml:"include,omitempty" json:"include,omitempty"`
	Exec        *Hook    `yaml:"exec,omitempty" json:"exec,omitempty"` // sync+exec
	InitialSync bool     `yaml:"initialSync,omitempty" json:"initialSync,omitempty"`
}

// Syncs reports whether the rule copies files into the containers.
func (w WatchRule) Syncs() bool {
	return w.Action == WatchSync || w.Action == WatchSyncRestart || w.Action == WatchSyncExec
}

// ReplicaCount is the number of replicas to run: Replicas, or 1 when unset.
func (a App) ReplicaCount() int {
	if a.Replicas == nil {
		return 1
	}
	return *a.Replicas
}

// Port publishes a container port on the host. Host 0 asks for an ephemeral
// port; HostEnd > Host publishes on the first free port of Host..HostEnd.
type Port struct {
	Name      string `yaml:"name,omitempty" json:"name,omitempty"`
	HostIP    string `yaml:"hostIP,omitempty" json:"hostIP,omitempty"`
	Host      int    `yaml:"host,omitempty" json:"host,omitempty"`
	HostEnd   int    `yaml:"hostEnd,omitempty" json:"hostEnd,omitempty"`
	Container int    `yaml:"container" json:"container"`
	Protocol  string `yaml:"protocol,omitempty" json:"protocol,omitempty"`
}

// Proto is the port's protocol, "tcp" when unset.
func (p Port) Proto() string {
	if p.Protocol == "" {
		return "tcp"
	}
	return p.Protocol
}

// Mount binds a host path into the container.
type Mount struct {
	Source         string `yaml:"source" json:"source"`
	Target         string `yaml:"target" json:"target"`
	ReadOnly       bool   `yaml:"readOnly,omitempty" json:"readOnly,omitempty"`
	CreateHostPath bool   `yaml:"createHostPath,omitempty" json:"createHostPath,omitempty"`
	Propagation    string `yaml:"propagation,omitempty" json:"propagation,omitempty"`
}

// VolumeMount mounts a named volume (Source set) or an anonymous one (Source
// empty). Driver and DriverOpts apply to anonymous volumes and to named ones
// the project does not declare.
type VolumeMount struct {
	Source     string            `yaml:"source,omitempty" json:"source,omitempty"`
	Target     string            `yaml:"target" json:"target"`
	ReadOnly   bool              `yaml:"readOnly,omitempty" json:"readOnly,omitempty"`
	NoCopy     bool              `yaml:"noCopy,omitempty" json:"noCopy,omitempty"`
	Subpath    string            `yaml:"subpath,omitempty" json:"subpath,omitempty"`
	Driver     string            `yaml:"driver,omitempty" json:"driver,omitempty"`
	DriverOpts map[string]string `yaml:"driverOpts,omitempty" json:"driverOpts,omitempty"`
}

// Tmpfs mounts a tmpfs at Target.
type Tmpfs struct {
	Target string   `yaml:"target" json:"target"`
	Size   Bytes    `yaml:"size,omitempty" json:"size,omitempty"`
	Mode   FileMode `yaml:"mode,omitempty" json:"mode,omitempty"`
}

// NetworkAttachment connects the app to a project network (by its key in
// Project.Networks) with extra DNS aliases and optional static addresses.
type NetworkAttachment struct {
	Name    string   `yaml:"name" json:"name"`
	Aliases []string `yaml:"aliases,omitempty" json:"aliases,omitempty"`
	IPv4    string   `yaml:"ipv4,omitempty" json:"ipv4,omitempty"`
	IPv6    string   `yaml:"ipv6,omitempty" json:"ipv6,omitempty"`
}

// Healthcheck is Docker's healthcheck model: Test is ["CMD", args...],
// ["CMD-SHELL", script] or ["NONE"].
type Healthcheck struct {
	Test          []string  `yaml:"test,omitempty" json:"test,omitempty"`
	Interval      *Duration `yaml:"interval,omitempty" json:"interval,omitempty"`
	Timeout       *Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	StartPeriod   *Duration `yaml:"startPeriod,omitempty" json:"startPeriod,omitempty"`
	StartInterval *Duration `yaml:"startInterval,omitempty" json:"startInterval,omitempty"`
	Retries       *int      `yaml:"retries,omitempty" json:"retries,omitempty"`
	Disable       bool      `yaml:"disable,omitempty" json:"disable,omitempty"`
}

// Dependency conditions, as in Compose.
const (
	ConditionStarted   = "service_started"
	ConditionHealthy   = "service_healthy"
	ConditionCompleted = "service_completed_successfully"
)

// Dependency is one depends_on entry.
type Dependency struct {
	Condition string `yaml:"condition" json:"condition"`
	Restart   bool   `yaml:"restart,omitempty" json:"restart,omitempty"`
	Required  *bool  `yaml:"required,omitempty" json:"required,omitempty"`
}

// IsRequired reports whether the dependency must exist (the default).
func (d Dependency) IsRequired() bool { return d.Required == nil || *d.Required }

// Resources holds cgroup limits and scheduling reservations.
type Resources struct {
	Limits       *ResourceLimits `yaml:"limits,omitempty" json:"limits,omitempty"`
	Reservations *ResourceLimits `yaml:"reservations,omitempty" json:"reservations,omitempty"`
}

// ResourceLimits is one side of Resources. Pids applies to limits only.
type ResourceLimits struct {
	CPUs   float64 `yaml:"cpus,omitempty" json:"cpus,omitempty"`
	Memory Bytes   `yaml:"memory,omitempty" json:"memory,omitempty"`
	Pids   int64   `yaml:"pids,omitempty" json:"pids,omitempty"`
}

// Device maps a host device into the container.
type Device struct {
	Source      string `yaml:"source" json:"source"`
	Target      string `yaml:"target,omitempty" json:"target,omitempty"`
	Permissions string `yaml:"permissions,omitempty" json:"permissions,omitempty"`
}

// Ulimit is a soft/hard resource limit pair.
type Ulimit struct {
	Soft int64 `yaml:"soft" json:"soft"`
	Hard int64 `yaml:"hard" json:"hard"`
}

// FileMount is a secret or config: content from a file, an environment
// variable or inline, written read-only into the container at Target.
type FileMount struct {
	Name        string    `yaml:"name" json:"name"`
	File        string    `yaml:"file,omitempty" json:"file,omitempty"`
	Environment string    `yaml:"environment,omitempty" json:"environment,omitempty"`
	Content     string    `yaml:"content,omitempty" json:"content,omitempty"`
	Target      string    `yaml:"target,omitempty" json:"target,omitempty"`
	UID         string    `yaml:"uid,omitempty" json:"uid,omitempty"`
	GID         string    `yaml:"gid,omitempty" json:"gid,omitempty"`
	Mode        *FileMode `yaml:"mode,omitempty" json:"mode,omitempty"`

	// Value is Environment's value captured at load time (Compose resolves
	// it from .env files too). It is never serialized: printing a spec must
	// not leak secrets.
	Value *string `yaml:"-" json:"-"`
}

// Logging selects a log driver.
type Logging struct {
	Driver  string            `yaml:"driver,omitempty" json:"driver,omitempty"`
	Options map[string]string `yaml:"options,omitempty" json:"options,omitempty"`
}

// Hooks are commands the engine runs inside a replica at lifecycle events.
type Hooks struct {
	PostCreate []Hook `yaml:"postCreate,omitempty" json:"postCreate,omitempty"`
	PostStart  []Hook `yaml:"postStart,omitempty" json:"postStart,omitempty"`
	PostAttach []Hook `yaml:"postAttach,omitempty" json:"postAttach,omitempty"`
	PreStop    []Hook `yaml:"preStop,omitempty" json:"preStop,omitempty"`
}

// Hook is one lifecycle command.
type Hook struct {
	Name       string            `yaml:"name,omitempty" json:"name,omitempty"`
	Command    []string          `yaml:"command" json:"command"`
	User       string            `yaml:"user,omitempty" json:"user,omitempty"`
	WorkingDir string            `yaml:"workingDir,omitempty" json:"workingDir,omitempty"`
	Env        map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	Privileged bool              `yaml:"privileged,omitempty" json:"privileged,omitempty"`
}

// Environ is the hook's environment as KEY=VALUE pairs, by key.
func (h Hook) Environ() []string {
	env := make([]string, 0, len(h.Env))
	for _, k := range slices.Sorted(maps.Keys(h.Env)) {
		env = append(env, k+"="+h.Env[k])
	}
	return env
}

// Devcontainer keeps what devcontainer.json says about the development
// session (not the container itself): the engine and remote tools use it.
type Devcontainer struct {
	WorkspaceFolder string            `yaml:"workspaceFolder,omitempty" json:"workspaceFolder,omitempty"`
	RemoteUser      string            `yaml:"remoteUser,omitempty" json:"remoteUser,omitempty"`
	RemoteEnv       map[string]string `yaml:"remoteEnv,omitempty" json:"remoteEnv,omitempty"`
	ForwardPorts    []string          `yaml:"forwardPorts,omitempty" json:"forwardPorts,omitempty"`
}

// Network is a project network. Name is the runtime name (Compose's
// `<project>_<key>` unless set); External networks must already exist.
type Network struct {
	Name       string            `yaml:"name,omitempty" json:"name,omitempty"`
	Driver     string            `yaml:"driver,omitempty" json:"driver,omitempty"`
	DriverOpts map[string]string `yaml:"driverOpts,omitempty" json:"driverOpts,omitempty"`
	External   bool              `yaml:"external,omitempty" json:"external,omitempty"`
	Internal   bool              `yaml:"internal,omitempty" json:"internal,omitempty"`
	Attachable bool              `yaml:"attachable,omitempty" json:"attachable,omitempty"`
	IPv6       bool              `yaml:"ipv6,omitempty" json:"ipv6,omitempty"`
	Labels     map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Subnets    []Subnet          `yaml:"subnets,omitempty" json:"subnets,omitempty"`
}

// Subnet is one IPAM pool of a network.
type Subnet struct {
	Subnet  string `yaml:"subnet" json:"subnet"`
	Gateway string `yaml:"gateway,omitempty" json:"gateway,omitempty"`
	IPRange string `yaml:"ipRange,omitempty" json:"ipRange,omitempty"`
}

// Volume is a project volume. Name is the runtime name.
type Volume struct {
	Name       string            `yaml:"name,omitempty" json:"name,omitempty"`
	Driver     string            `yaml:"driver,omitempty" json:"driver,omitempty"`
	DriverOpts map[string]string `yaml:"driverOpts,omitempty" json:"driverOpts,omitempty"`
	External   bool              `yaml:"external,omitempty" json:"external,omitempty"`
	Labels     map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
}

// UpdateConfig is how a changed app replaces its replicas where the
// runtime rolls them out (Compose's deploy.update_config): so many at a
// time, each new one started before (start-first) or after (stop-first,
// the default) the one it replaces stops.
type UpdateConfig struct {
	Parallelism int    `yaml:"parallelism,omitempty" json:"parallelism,omitempty"` // 0: one at a time; UpdateAllAtOnce: all
	Order       string `yaml:"order,omitempty" json:"order,omitempty"`
}

// UpdateAllAtOnce is the parallelism of an update that replaces every
// replica at once (Compose's parallelism 0, as swarm reads it), and the
// largest a spec takes.
const UpdateAllAtOnce = 1 << 20

// Update orders.
const (
	UpdateStopFirst  = "stop-first"
	UpdateStartFirst = "start-first"
)
