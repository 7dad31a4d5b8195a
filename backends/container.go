package backends

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// State is a container's lifecycle state, as Docker names them.
type State string

// Container states.
const (
	StateCreated    State = "created"
	StateRunning    State = "running"
	StatePaused     State = "paused"
	StateRestarting State = "restarting"
	StateExited     State = "exited"
	StateDead       State = "dead"
	StateRemoving   State = "removing"
)

// Health is a container's healthcheck status ("" when it has none).
type Health string

// Health states.
const (
	HealthNone      Health = ""
	HealthStarting  Health = "starting"
	HealthHealthy   Health = "healthy"
	HealthUnhealthy Health = "unhealthy"
)

// Container is one container as List returns it. State is typed; human
// strings ("Up 3 seconds (healthy)") are rendered at the edges
// (internal/statustext), never stored here.
type Container struct {
	ID      string
	Name    string
	Image   string
	ImageID string
	Command string // the main process's command line, for display
	Labels  map[string]string
	State   State
	Health  Health
	// ExitCode is the last exit code (meaningful once exited).
	ExitCode int
	Created  time.Time
	// StartedAt and FinishedAt may be approximate in a List (some runtimes
	// report only an age) and are exact from Inspect; zero if never.
	StartedAt    time.Time
	FinishedAt   time.Time
	RestartCount int
	Ports        []PortBinding
	// Networks maps network name to the container's endpoint on it.
	Networks map[string]EndpointInfo
	Mounts   []MountPoint
}

// Project, App and Replica read the identity labels: cornus's, else docker
// compose's (a project docker compose created is the same project).

// Project is the project label.
func (c Container) Project() string { return c.label(LabelProject, ComposeProject) }

// App is the app label.
func (c Container) App() string { return c.label(LabelApp, ComposeService) }

// Replica is the replica number label.
func (c Container) Replica() string { return c.label(LabelReplica, ComposeNumber) }

// ReplicaNumber is Replica as a number (0 when unlabelled).
func (c Container) ReplicaNumber() int {
	n, _ := strconv.Atoi(c.Replica())
	return n
}

// Oneoff reports a `run` container (not one of the app's replicas).
func (c Container) Oneoff() bool {
	return c.Labels[LabelOneoff] == "true" || strings.EqualFold(c.Labels[ComposeOneoff], "true")
}

// DependsOn lists the apps the container's app depends on, from cornus's
// label or docker compose's (service:condition:restart,...).
func (c Container) DependsOn() []string {
	if d, ok := c.Labels[LabelDependsOn]; ok {
		if d == "" {
			return nil
		}
		return strings.Split(d, ",")
	}
	var out []string
	for _, dep := range strings.Split(c.Labels[ComposeDependsOn], ",") {
		if name, _, _ := strings.Cut(dep, ":"); name != "" {
			out = append(out, name)
		}
	}
	return out
}

func (c Container) label(cornus, compose string) string {
	if v, ok := c.Labels[cornus]; ok {
		return v
	}
	return c.Labels[compose]
}

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

// SortPorts orders published ports as docker ps lists them: by container
// port, protocol, host address, then host port.
func SortPorts(ps []PortBinding) {
	slices.SortFunc(ps, func(a, b PortBinding) int {
		if a.ContainerPort != b.ContainerPort {
			return a.ContainerPort - b.ContainerPort
		}
		if a.Protocol != b.Protocol {
			return strings.Compare(a.Protocol, b.Protocol)
		}
		if a.HostIP != b.HostIP {
			return strings.Compare(a.HostIP, b.HostIP)
		}
		return a.HostPort - b.HostPort
	})
}

// ContainerDetails is Inspect's answer: List's view plus configuration and
// runtime state.
type ContainerDetails struct {
	Container
	Config    ContainerConfig
	Pid       int
	OOMKilled bool
	Error     string
	HealthLog []HealthResult
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
	RestartPolicy spec.RestartPolicy
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

// Stats is one sample of a container's resource usage.
type Stats struct {
	Time        time.Time
	CPUTotal    time.Duration // CPU time used since start
	SystemCPU   time.Duration // the host's CPU time, for percentages
	OnlineCPUs  int
	MemoryUsage uint64
	MemoryLimit uint64
	Pids        uint64
	NetRx       uint64
	NetTx       uint64
	BlockRead   uint64
	BlockWrite  uint64
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
	// OnBuild are the image's ONBUILD triggers (Docker's config
	// extension): instructions a build FROM it runs first.
	OnBuild []string
}

// OnBuildOf reads the ONBUILD triggers of an image config (OCI or
// Docker JSON; the OCI schema has no field for them).
func OnBuildOf(config []byte) []string {
	var c struct {
		Config struct {
			OnBuild []string `json:"OnBuild"`
		} `json:"config"`
	}
	_ = json.Unmarshal(config, &c) // a config that does not parse has none
	return c.Config.OnBuild
}

// PullProgress is one progress event of a pull.
type PullProgress struct {
	ID      string // layer id, or "" for overall status
	Status  string
	Current int64
	Total   int64
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

// Event is a container lifecycle event.
type Event struct {
	Time     time.Time
	Action   string // create, start, die, stop, kill, destroy, health_status: healthy, connect, disconnect, ...
	ID       string
	Name     string
	Image    string
	Labels   map[string]string
	ExitCode *int
}
