package incus

import (
	"encoding/json"
	"time"
)

// The Incus REST API shapes this package sends and reads (the subset it
// uses, with Incus's own JSON names). See
// https://linuxcontainers.org/incus/docs/main/rest-api/.

// response is the envelope of every answer: sync (metadata is the
// result), async (metadata is the operation) or error.
type response struct {
	Type       string          `json:"type"` // sync, async, error
	Status     string          `json:"status"`
	StatusCode int             `json:"status_code"`
	Operation  string          `json:"operation"`
	ErrorCode  int             `json:"error_code"`
	Error      string          `json:"error"`
	Metadata   json.RawMessage `json:"metadata"`
}

// server is GET /1.0.
type server struct {
	APIExtensions []string `json:"api_extensions"`
	Environment   struct {
		ServerVersion  string   `json:"server_version"`
		Architectures  []string `json:"architectures"`
		Driver         string   `json:"driver"`
		KernelFeatures struct {
			IdmappedMounts string `json:"idmapped_mounts"`
		} `json:"kernel_features"`
	} `json:"environment"`
}

// operation is a background operation; Metadata holds what it produced
// (an exec's fds and return code).
type operation struct {
	ID         string          `json:"id"`
	Class      string          `json:"class"`
	Status     string          `json:"status"`
	StatusCode int             `json:"status_code"`
	Err        string          `json:"err"`
	Metadata   json.RawMessage `json:"metadata"`
}

// instanceSource says where a new instance's root filesystem comes from.
type instanceSource struct {
	Type        string `json:"type"` // image
	Alias       string `json:"alias,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// The OCI path (Incus >= 6.3): a registry as an image server.
	Server   string `json:"server,omitempty"`
	Protocol string `json:"protocol,omitempty"` // oci
	Mode     string `json:"mode,omitempty"`     // pull
}

// instancesPost is the body of POST /1.0/instances.
type instancesPost struct {
	Name        string                       `json:"name"`
	Type        string                       `json:"type"` // container
	Source      instanceSource               `json:"source"`
	Config      map[string]string            `json:"config"`
	Devices     map[string]map[string]string `json:"devices"`
	Profiles    []string                     `json:"profiles,omitempty"`
	Description string                       `json:"description,omitempty"`
	Start       bool                         `json:"start,omitempty"`
}

// instance is GET /1.0/instances/NAME (and each entry of ?recursion=1).
type instance struct {
	Name            string                       `json:"name"`
	Status          string                       `json:"status"` // Running, Stopped, Frozen, Error
	StatusCode      int                          `json:"status_code"`
	CreatedAt       time.Time                    `json:"created_at"`
	LastUsedAt      time.Time                    `json:"last_used_at"`
	Config          map[string]string            `json:"config"`
	Devices         map[string]map[string]string `json:"devices"`
	ExpandedConfig  map[string]string            `json:"expanded_config"`
	ExpandedDevices map[string]map[string]string `json:"expanded_devices"`
	Profiles        []string                     `json:"profiles"`
	Description     string                       `json:"description"`
}

// instanceState is GET /1.0/instances/NAME/state.
type instanceState struct {
	Status     string `json:"status"`
	StatusCode int    `json:"status_code"`
	Pid        int64  `json:"pid"`
	Processes  int64  `json:"processes"`
	CPU        struct {
		Usage int64 `json:"usage"` // nanoseconds
	} `json:"cpu"`
	Memory struct {
		Usage     int64 `json:"usage"`
		UsagePeak int64 `json:"usage_peak"`
		Total     int64 `json:"total"`
	} `json:"memory"`
	Network map[string]struct {
		Addresses []struct {
			Family  string `json:"family"`
			Address string `json:"address"`
			Netmask string `json:"netmask"`
			Scope   string `json:"scope"`
		} `json:"addresses"`
		Counters struct {
			BytesReceived int64 `json:"bytes_received"`
			BytesSent     int64 `json:"bytes_sent"`
		} `json:"counters"`
		Hwaddr string `json:"hwaddr"`
	} `json:"network"`
}

// statePut is PUT /1.0/instances/NAME/state.
type statePut struct {
	Action  string `json:"action"` // start, stop, restart, freeze, unfreeze
	Timeout int    `json:"timeout"`
	Force   bool   `json:"force"`
}

// execPost is POST /1.0/instances/NAME/exec.
type execPost struct {
	Command          []string          `json:"command"`
	Environment      map[string]string `json:"environment,omitempty"`
	WaitForWebsocket bool              `json:"wait-for-websocket"`
	Interactive      bool              `json:"interactive"`
	Width            int               `json:"width,omitempty"`
	Height           int               `json:"height,omitempty"`
	User             uint32            `json:"user"`
	Group            uint32            `json:"group"`
	Cwd              string            `json:"cwd,omitempty"`
}

// execMetadata is an exec operation's metadata: the websocket secrets
// while it runs, the exit code once done.
type execMetadata struct {
	Fds    map[string]string `json:"fds"`
	Return *int              `json:"return"`
}

// image is GET /1.0/images/FINGERPRINT.
type image struct {
	Fingerprint  string            `json:"fingerprint"`
	Filename     string            `json:"filename"`
	Size         int64             `json:"size"`
	Architecture string            `json:"architecture"`
	Type         string            `json:"type"`
	CreatedAt    time.Time         `json:"created_at"`
	UploadedAt   time.Time         `json:"uploaded_at"`
	Properties   map[string]string `json:"properties"`
	Aliases      []struct {
		Name string `json:"name"`
	} `json:"aliases"`
}

// imageAlias is GET /1.0/images/aliases/NAME and the body that makes one.
type imageAlias struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	Type   string `json:"type,omitempty"`
}

// network is GET /1.0/networks/NAME and the body that makes one.
type network struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Managed     bool              `json:"managed,omitempty"`
	Description string            `json:"description,omitempty"`
	Config      map[string]string `json:"config"`
	UsedBy      []string          `json:"used_by,omitempty"`
}

// storageVolume is a custom storage volume, read and created.
type storageVolume struct {
	Name        string            `json:"name"`
	Type        string            `json:"type,omitempty"` // custom
	Description string            `json:"description,omitempty"`
	Config      map[string]string `json:"config"`
	ContentType string            `json:"content_type,omitempty"`
	CreatedAt   time.Time         `json:"created_at,omitzero"`
	UsedBy      []string          `json:"used_by,omitempty"`
}

// profile is GET /1.0/profiles/NAME.
type profile struct {
	Name    string                       `json:"name"`
	Devices map[string]map[string]string `json:"devices"`
}

// storagePool is GET /1.0/storage-pools/NAME.
type storagePool struct {
	Name   string            `json:"name"`
	Driver string            `json:"driver"`
	Config map[string]string `json:"config"`
}
