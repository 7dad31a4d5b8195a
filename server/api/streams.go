package api

import (
	"encoding/json"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// StreamHeader opens every stream of a session or a caretaker relay: one
// JSON line naming what the stream is for; the other side answers with a
// DialReply line, then the stream carries the bytes.
type StreamHeader struct {
	Op     string      `json:"op"`
	Dial   *Dial       `json:"dial,omitempty"`
	Egress *EgressOpen `json:"egress,omitempty"`
	Mount  *MountOpen  `json:"mount,omitempty"`
	Agent  *AgentOpen  `json:"agent,omitempty"`
	Build  *BuildOpen  `json:"build,omitempty"`
	// Credential names the credential an OpCredential stream asks for.
	Credential *CredentialOpen `json:"credential,omitempty"`
	// Docker names the service an OpDocker stream serves.
	Docker *DockerOpen `json:"docker,omitempty"`
}

// Stream operations.
const (
	// OpDial: client → server, reach a workload's port (port-forward,
	// tunnel); server → caretaker (remote mode), the same, dialed in the
	// replica's network namespace.
	OpDial = "dial"
	// OpEgress: caretaker → server → client, a workload's outbound
	// connection leaving from the client (each hop re-checks the policy).
	OpEgress = "egress"
	// OpMount: server → client, the 9P export of a client-local mount;
	// caretaker → server (remote mode), the same, forwarded to the client.
	OpMount = "mount"
	// OpAgent: server → caretaker, serve a forwarded ssh-agent socket
	// while the stream lives (exec --forward-agent); caretaker → server →
	// client, one connection to that socket, carried to the caller's
	// agent.
	OpAgent = "agent"
	// OpBuild: server → client, what a build reads from the client
	// (BuildOpen): a directory's walk, a file, a build secret, a
	// connection to its ssh agent. The client serves only what the build
	// it asked for names.
	OpBuild = "build"
	// OpCredential: caretaker → server → client, mint a credential the
	// deployment declared (CredentialOpen); the client answers with one
	// CredentialValue line. The server checks the declaration and relays
	// the bytes without reading or keeping them.
	OpCredential = "credential"
	// OpDocker: caretaker → server, one connection to the docker socket
	// of a service with the docker role: HTTP (the Docker Engine API)
	// from the app, answered by the server as the deployment's tenant.
	OpDocker = "docker"
)

// DockerOpen is a connection to Service's docker endpoint.
type DockerOpen struct {
	Service string `json:"service"`
}

// CredentialOpen asks for credential Name of Service.
type CredentialOpen struct {
	Service string `json:"service"`
	Name    string `json:"name"`
}

// CredentialValue is a minted credential: its bytes, and when it expires
// (zero: the source named no expiry).
type CredentialValue struct {
	Value      []byte    `json:"value"`
	Expiration time.Time `json:"expiration,omitzero"`
}

// MaxCredential bounds a minted credential's bytes.
const MaxCredential = 256 << 10

// BuildOpen is one read of a build from its client.
type BuildOpen struct {
	// Build is the ID the client gave its build request.
	Build string `json:"build"`
	Kind  string `json:"kind"`
	// Dir (walk, open) is a directory the build names, with the ignore
	// file's patterns the client applies (Excludes); Target (walk) the
	// subtree to walk ("" all of it); Path (open) the file, relative.
	Dir      string   `json:"dir,omitempty"`
	Excludes []string `json:"excludes,omitempty"`
	Target   string   `json:"target,omitempty"`
	Path     string   `json:"path,omitempty"`
	// Secret and SSH (secret, agent) are the build's entry, as its spec
	// has it (a secret's value never travels in a spec).
	Secret *spec.BuildSecret `json:"secret,omitempty"`
	SSH    *spec.BuildSSH    `json:"ssh,omitempty"`
}

// Build reads (BuildOpen.Kind).
const (
	BuildWalk     = "walk"
	BuildOpenFile = "open"
	BuildSecret   = "secret"
	BuildAgent    = "agent"
)

// BuildEntry is one line of a walk stream: a file's stat, or the walk's
// end (Error set when it failed).
type BuildEntry struct {
	Stat  json.RawMessage `json:"stat,omitempty"` // fsutil's types.Stat
	End   bool            `json:"end,omitempty"`
	Error string          `json:"error,omitempty"`
}

// AgentOpen names one forwarded agent socket.
type AgentOpen struct {
	// ID names the socket (AgentSocket) and the exec it serves.
	ID string `json:"id"`
}

// MaxAgentID bounds an agent socket's ID.
const MaxAgentID = 64

// EgressOpen is one outbound connection to relay.
type EgressOpen struct {
	Service string `json:"service"`
	Replica int    `json:"replica,omitempty"`
	// Dest is host:port (a name when the workload asked by name, else the
	// IP it dialed).
	Dest string `json:"dest"`
	// Route is what the sender decided; each receiver decides again and
	// acts on its own decision.
	Route string `json:"route"`
}

// MountOpen asks the client to serve client-local mount Index.
type MountOpen struct {
	Index int `json:"index"`
}

// LocalMount is one client-local mount as the server sees it: the client
// keeps the path; the server learns only what it binds where.
type LocalMount struct {
	// Index names the export in the client's OpMount streams.
	Index int `json:"index"`
	// Service is the app it is bound into.
	Service string `json:"service"`
	// Target is the absolute path in the app.
	Target string `json:"target"`
	// ReadOnly binds it read-only (the client refuses writes as well).
	ReadOnly bool `json:"readOnly,omitempty"`
	// File is set when the source is a single file: the client exports its
	// parent with only that name visible, and the server binds File, the
	// file's base name, below the export.
	File string `json:"file,omitempty"`
	// Source is the client's path, for messages only.
	Source string `json:"source,omitempty"`
}

// MaxLocalMounts bounds the client-local mounts of one up.
const MaxLocalMounts = 64
