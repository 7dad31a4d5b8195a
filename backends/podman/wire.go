package podman

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Wire types of the libpod API: only the fields cornus reads or sends,
// with podman's own JSON names. They are written from the API's answers
// (podman 4.3; where podman 5 changed a type, both forms are read).

// hostInfo is GET /libpod/info.
type hostInfo struct {
	Host struct {
		CgroupManager  string `json:"cgroupManager"`
		CgroupVersion  string `json:"cgroupVersion"`
		NetworkBackend string `json:"networkBackend"`
		Security       struct {
			Rootless bool `json:"rootless"`
		} `json:"security"`
	} `json:"host"`
	Version struct {
		Version string `json:"Version"`
	} `json:"version"`
}

// schedulesHealthchecks reports whether podman can run healthchecks on
// its own: it schedules them as systemd timers, so only where systemd
// manages its cgroups. Elsewhere a healthcheck stays "starting" forever.
func (i *hostInfo) schedulesHealthchecks() bool { return i.Host.CgroupManager == "systemd" }

// namespace is a SpecGenerator namespace setting.
type namespace struct {
	NSMode string `json:"nsmode,omitempty"`
	Value  string `json:"value,omitempty"`
}

// portMapping is a published port (create and list).
type portMapping struct {
	HostIP        string `json:"host_ip,omitempty"`
	ContainerPort uint16 `json:"container_port"`
	HostPort      uint16 `json:"host_port"`
	Range         uint16 `json:"range,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
}

// perNetwork is a container's settings on one network.
type perNetwork struct {
	Aliases   []string `json:"aliases,omitempty"`
	StaticIPs []string `json:"static_ips,omitempty"`
}

// ociMount is an OCI runtime mount (binds and tmpfs).
type ociMount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type,omitempty"`
	Source      string   `json:"source,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// namedVolume mounts a podman volume ("" Name: an anonymous one).
type namedVolume struct {
	Name    string   `json:"Name"`
	Dest    string   `json:"Dest"`
	Options []string `json:"Options,omitempty"`
}

// rlimit is a POSIX resource limit.
type rlimit struct {
	Type string `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

// linuxDevice is a device to add: podman reads "src[:dst[:perms]]" from
// Path.
type linuxDevice struct {
	Path string `json:"path"`
}

// deviceRule is an OCI device cgroup rule.
type deviceRule struct {
	Allow  bool   `json:"allow"`
	Type   string `json:"type,omitempty"`
	Major  *int64 `json:"major,omitempty"`
	Minor  *int64 `json:"minor,omitempty"`
	Access string `json:"access,omitempty"`
}

// resources are OCI Linux cgroup resources.
type resources struct {
	Memory *struct {
		Limit       *int64 `json:"limit,omitempty"`
		Reservation *int64 `json:"reservation,omitempty"`
	} `json:"memory,omitempty"`
	CPU *struct {
		Quota  *int64  `json:"quota,omitempty"`
		Period *uint64 `json:"period,omitempty"`
	} `json:"cpu,omitempty"`
	Pids *struct {
		Limit int64 `json:"limit"`
	} `json:"pids,omitempty"`
}

// healthConfig is a healthcheck, durations in nanoseconds.
type healthConfig struct {
	Test        []string      `json:"Test,omitempty"`
	Interval    time.Duration `json:"Interval,omitempty"`
	Timeout     time.Duration `json:"Timeout,omitempty"`
	StartPeriod time.Duration `json:"StartPeriod,omitempty"`
	Retries     int           `json:"Retries,omitempty"`
}

// logConfig selects the container's log driver.
type logConfig struct {
	Driver  string            `json:"driver,omitempty"`
	Size    int64             `json:"size,omitempty"`
	Options map[string]string `json:"options,omitempty"`
}

// specGenerator is the body of POST /libpod/containers/create. Entrypoint
// and Command are pointers: nil keeps the image's, an empty list is sent
// as [] (podman reads both nil and [] as "the image's": see buildSpec).
type specGenerator struct {
	Name         string            `json:"name,omitempty"`
	Image        string            `json:"image"`
	RawImageName string            `json:"raw_image_name,omitempty"`
	ImageOS      string            `json:"image_os,omitempty"`
	ImageArch    string            `json:"image_arch,omitempty"`
	ImageVariant string            `json:"image_variant,omitempty"`
	Entrypoint   *[]string         `json:"entrypoint,omitempty"`
	Command      *[]string         `json:"command,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Terminal     bool              `json:"terminal,omitempty"`
	Stdin        bool              `json:"stdin,omitempty"`
	StopSignal   int               `json:"stop_signal,omitempty"`
	StopTimeout  *uint             `json:"stop_timeout,omitempty"`
	Log          *logConfig        `json:"log_configuration,omitempty"`
	Restart      string            `json:"restart_policy,omitempty"`
	RestartTries *uint             `json:"restart_tries,omitempty"`
	Hostname     string            `json:"hostname,omitempty"`
	Sysctl       map[string]string `json:"sysctl,omitempty"`
	PidNS        *namespace        `json:"pidns,omitempty"`
	UtsNS        *namespace        `json:"utsns,omitempty"`
	IpcNS        *namespace        `json:"ipcns,omitempty"`
	UserNS       *namespace        `json:"userns,omitempty"`
	CgroupNS     *namespace        `json:"cgroupns,omitempty"`
	NetNS        *namespace        `json:"netns,omitempty"`

	Init       bool           `json:"init,omitempty"`
	Mounts     []ociMount     `json:"mounts,omitempty"`
	Volumes    []namedVolume  `json:"volumes,omitempty"`
	Devices    []linuxDevice  `json:"devices,omitempty"`
	DeviceCg   []deviceRule   `json:"device_cgroup_rule,omitempty"`
	ShmSize    *int64         `json:"shm_size,omitempty"`
	WorkDir    string         `json:"work_dir,omitempty"`
	CreateWD   bool           `json:"create_working_dir,omitempty"`
	Privileged bool           `json:"privileged,omitempty"`
	User       string         `json:"user,omitempty"`
	Groups     []string       `json:"groups,omitempty"`
	CapAdd     []string       `json:"cap_add,omitempty"`
	CapDrop    []string       `json:"cap_drop,omitempty"`
	SELinux    []string       `json:"selinux_opts,omitempty"`
	AppArmor   string         `json:"apparmor_profile,omitempty"`
	Seccomp    string         `json:"seccomp_profile_path,omitempty"`
	NoNewPriv  bool           `json:"no_new_privileges,omitempty"`
	ReadOnly   bool           `json:"read_only_filesystem,omitempty"`
	Mask       []string       `json:"mask,omitempty"`
	Unmask     []string       `json:"unmask,omitempty"`
	Resources  *resources     `json:"resource_limits,omitempty"`
	Rlimits    []rlimit       `json:"r_limits,omitempty"`
	Health     *healthConfig  `json:"healthconfig,omitempty"`
	Ports      []portMapping  `json:"portmappings,omitempty"`
	Expose     map[int]string `json:"expose,omitempty"`
	DNSServer  []string       `json:"dns_server,omitempty"`
	DNSSearch  []string       `json:"dns_search,omitempty"`
	DNSOption  []string       `json:"dns_option,omitempty"`
	HostAdd    []string       `json:"hostadd,omitempty"`

	Networks map[string]perNetwork `json:"Networks,omitempty"`
}

// createResponse is the answer to a create.
type createResponse struct {
	ID       string   `json:"Id"`
	Warnings []string `json:"Warnings"`
}

// containerInspect is GET /libpod/containers/{id}/json.
type containerInspect struct {
	ID           string    `json:"Id"`
	Created      time.Time `json:"Created"`
	Path         string    `json:"Path"`
	Args         []string  `json:"Args"`
	Name         string    `json:"Name"`
	Image        string    `json:"Image"`
	ImageName    string    `json:"ImageName"`
	RestartCount int       `json:"RestartCount"`
	State        struct {
		Status     string    `json:"Status"`
		Running    bool      `json:"Running"`
		Paused     bool      `json:"Paused"`
		Restarting bool      `json:"Restarting"`
		OOMKilled  bool      `json:"OOMKilled"`
		Dead       bool      `json:"Dead"`
		Pid        int       `json:"Pid"`
		ExitCode   int       `json:"ExitCode"`
		Error      string    `json:"Error"`
		StartedAt  time.Time `json:"StartedAt"`
		FinishedAt time.Time `json:"FinishedAt"`
		Health     *struct {
			Status string `json:"Status"`
			Log    []struct {
				Start    string `json:"Start"`
				End      string `json:"End"`
				ExitCode int    `json:"ExitCode"`
				Output   string `json:"Output"`
			} `json:"Log"`
		} `json:"Health"`
	} `json:"State"`
	Mounts []struct {
		Type        string `json:"Type"`
		Name        string `json:"Name"`
		Source      string `json:"Source"`
		Destination string `json:"Destination"`
		RW          bool   `json:"RW"`
	} `json:"Mounts"`
	NetworkSettings struct {
		Ports    map[string][]struct{ HostIP, HostPort string } `json:"Ports"`
		Networks map[string]struct {
			NetworkID         string   `json:"NetworkID"`
			Gateway           string   `json:"Gateway"`
			IPAddress         string   `json:"IPAddress"`
			IPPrefixLen       int      `json:"IPPrefixLen"`
			GlobalIPv6Address string   `json:"GlobalIPv6Address"`
			MacAddress        string   `json:"MacAddress"`
			Aliases           []string `json:"Aliases"`
		} `json:"Networks"`
	} `json:"NetworkSettings"`
	Config struct {
		Hostname    string            `json:"Hostname"`
		Domainname  string            `json:"Domainname"`
		User        string            `json:"User"`
		Tty         bool              `json:"Tty"`
		OpenStdin   bool              `json:"OpenStdin"`
		Env         []string          `json:"Env"`
		Cmd         []string          `json:"Cmd"`
		Image       string            `json:"Image"`
		WorkingDir  string            `json:"WorkingDir"`
		Entrypoint  stringOrList      `json:"Entrypoint"`
		Labels      map[string]string `json:"Labels"`
		StopSignal  signalValue       `json:"StopSignal"`
		StopTimeout uint              `json:"StopTimeout"`
		Healthcheck *healthConfig     `json:"Healthcheck"`
		Annotations map[string]string `json:"Annotations"`
	} `json:"Config"`
	HostConfig struct {
		Privileged    bool `json:"Privileged"`
		Init          bool `json:"Init"`
		RestartPolicy struct {
			Name              string `json:"Name"`
			MaximumRetryCount int    `json:"MaximumRetryCount"`
		} `json:"RestartPolicy"`
		Sysctls map[string]string `json:"Sysctls"`
		Ulimits []struct {
			Name string `json:"Name"`
			Soft uint64 `json:"Soft"`
			Hard uint64 `json:"Hard"`
		} `json:"Ulimits"`
	} `json:"HostConfig"`
}

// containerListEntry is one entry of GET /libpod/containers/json.
type containerListEntry struct {
	ID        string            `json:"Id"`
	Names     []string          `json:"Names"`
	Image     string            `json:"Image"`
	ImageID   string            `json:"ImageID"`
	Command   []string          `json:"Command"`
	Created   time.Time         `json:"Created"`
	State     string            `json:"State"`
	Status    string            `json:"Status"` // the health status, in podman 4
	Labels    map[string]string `json:"Labels"`
	ExitCode  int               `json:"ExitCode"`
	ExitedAt  int64             `json:"ExitedAt"`
	StartedAt int64             `json:"StartedAt"`
	Ports     []portMapping     `json:"Ports"`
	Networks  []string          `json:"Networks"`
	Mounts    []string          `json:"Mounts"`
	Restarts  int               `json:"Restarts"`
}

// stringOrList reads a command that podman 4 reports as one string
// (Config.Entrypoint) and podman 5 as a list.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(data []byte) error {
	var list []string
	if err := json.Unmarshal(data, &list); err == nil {
		*s = list
		return nil
	}
	var one string
	if err := json.Unmarshal(data, &one); err != nil {
		return err
	}
	*s = nil
	if one != "" {
		*s = strings.Fields(one)
	}
	return nil
}

// signalValue reads a stop signal podman 4 reports as a number and podman
// 5 as a name.
type signalValue string

func (s *signalValue) UnmarshalJSON(data []byte) error {
	var n int
	if err := json.Unmarshal(data, &n); err == nil {
		*s = ""
		if n > 0 {
			*s = signalValue(strconv.Itoa(n))
		}
		return nil
	}
	var name string
	if err := json.Unmarshal(data, &name); err != nil {
		return err
	}
	*s = signalValue(name)
	return nil
}

// execCreate is the body of POST /libpod/containers/{id}/exec.
type execCreate struct {
	Cmd          []string `json:"Cmd"`
	Env          []string `json:"Env,omitempty"`
	User         string   `json:"User,omitempty"`
	WorkingDir   string   `json:"WorkingDir,omitempty"`
	Privileged   bool     `json:"Privileged,omitempty"`
	Tty          bool     `json:"Tty,omitempty"`
	AttachStdin  bool     `json:"AttachStdin"`
	AttachStdout bool     `json:"AttachStdout"`
	AttachStderr bool     `json:"AttachStderr"`
}

// execInspect is GET /libpod/exec/{id}/json.
type execInspect struct {
	Running  bool `json:"Running"`
	ExitCode int  `json:"ExitCode"`
}

// networkResource is a libpod network.
type networkResource struct {
	Name       string            `json:"name"`
	ID         string            `json:"id"`
	Driver     string            `json:"driver"`
	Created    time.Time         `json:"created"`
	Subnets    []networkSubnet   `json:"subnets,omitempty"`
	IPv6       bool              `json:"ipv6_enabled"`
	Internal   bool              `json:"internal"`
	DNSEnabled bool              `json:"dns_enabled"`
	Labels     map[string]string `json:"labels,omitempty"`
	Options    map[string]string `json:"options,omitempty"`
}

// networkSubnet is one subnet of a network.
type networkSubnet struct {
	Subnet     string `json:"subnet"`
	Gateway    string `json:"gateway,omitempty"`
	LeaseRange *struct {
		StartIP string `json:"start_ip,omitempty"`
		EndIP   string `json:"end_ip,omitempty"`
	} `json:"lease_range,omitempty"`
}

// volumeResource is a libpod volume (create body and answers).
type volumeResource struct {
	Name       string            `json:"Name"`
	Driver     string            `json:"Driver,omitempty"`
	Mountpoint string            `json:"Mountpoint,omitempty"`
	CreatedAt  time.Time         `json:"CreatedAt,omitzero"`
	Labels     map[string]string `json:"Labels,omitempty"`
	Options    map[string]string `json:"Options,omitempty"`
	Label      map[string]string `json:"Label,omitempty"` // the create body's name for Labels
}

// imageInspect is GET /libpod/images/{name}/json.
type imageInspect struct {
	ID           string    `json:"Id"`
	RepoTags     []string  `json:"RepoTags"`
	RepoDigests  []string  `json:"RepoDigests"`
	Created      time.Time `json:"Created"`
	Size         int64     `json:"Size"`
	Architecture string    `json:"Architecture"`
	Os           string    `json:"Os"`
	Config       struct {
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		Env          []string            `json:"Env"`
		WorkingDir   string              `json:"WorkingDir"`
		User         string              `json:"User"`
		Labels       map[string]string   `json:"Labels"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		OnBuild      []string            `json:"OnBuild"`
	} `json:"Config"`
	HealthCheck *healthConfig `json:"Healthcheck"`
}

// imageSummary is one entry of GET /libpod/images/json.
type imageSummary struct {
	ID          string            `json:"Id"`
	RepoTags    []string          `json:"RepoTags"`
	RepoDigests []string          `json:"RepoDigests"`
	Created     int64             `json:"Created"`
	Size        int64             `json:"Size"`
	Labels      map[string]string `json:"Labels"`
}
