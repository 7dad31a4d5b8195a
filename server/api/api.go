// Package api is the wire format of cornus serve's deploy API, shared by
// the server and its client: routes, request and response bodies, and the
// framing of streamed answers.
package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// Version is the API path prefix.
const Version = "/v1"

// Headers.
const (
	// HeaderSession names the deploy-attach session a request belongs to.
	HeaderSession = "X-Cornus-Session"
	// HeaderCaretakerToken carries a deployment's caretaker token back to
	// the client that deployed it.
	HeaderCaretakerToken = "X-Cornus-Caretaker-Token"
	// HeaderPathStat carries the stat of a compose cp's path (base64 of
	// a PathStat's JSON) on GET /v1/projects/{project}/archive.
	HeaderPathStat = "X-Cornus-Path-Stat"
	// HeaderEarlyData ("1"), on a session's or a relay's upgrade, says
	// the side sending it keeps what follows a stream's opening line
	// (ReadHeader): the other side may send bytes behind a header before
	// its answer (OpenEarly) and pass a far end's answer through as its
	// own, a round trip saved at each hop.
	HeaderEarlyData = "X-Cornus-Early-Data"
)

// OfferEarly says in h, an upgrade's request or answer, that this side
// keeps what follows a stream's header (HeaderEarlyData).
func OfferEarly(h http.Header) { h.Set(HeaderEarlyData, "1") }

// TakesEarly reports whether h, the other side's upgrade request or
// answer, says it keeps what follows a stream's header.
func TakesEarly(h http.Header) bool { return h.Get(HeaderEarlyData) == "1" }

// Volume is one of GET /v1/projects/{project}/volumes.
type Volume struct {
	Name       string            `json:"name"`
	Driver     string            `json:"driver"`
	Mountpoint string            `json:"mountpoint,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Created    time.Time         `json:"created"`
}

// PathStat is a container path's stat, for compose cp.
type PathStat struct {
	Name       string    `json:"name"`
	Size       int64     `json:"size"`
	Mode       uint32    `json:"mode"`
	Mtime      time.Time `json:"mtime"`
	LinkTarget string    `json:"linkTarget,omitempty"`
}

// Info is GET /v1/info.
type Info struct {
	Version string `json:"version"`
	Backend string `json:"backend"`
	// Rootless is set when the backend runs rootless (podman): port-forward
	// and tunnel then refuse unless the server allows them.
	Rootless bool `json:"rootless,omitempty"`
	// Tenant is the name of the token the request used.
	Tenant string `json:"tenant"`
}

// Error is every non-2xx body.
type Error struct {
	Message string `json:"message"`
	// Kind is the errdefs class ("notfound", "conflict", "invalid",
	// "denied", "unavailable", "notimplemented"), so the client's errors
	// keep their class.
	Kind string `json:"kind,omitempty"`
}

// UpRequest is POST /v1/projects/{project}/up.
type UpRequest struct {
	Spec          spec.Project `json:"spec"`
	Services      []string     `json:"services,omitempty"`
	NoDeps        bool         `json:"noDeps,omitempty"`
	ForceRecreate bool         `json:"forceRecreate,omitempty"`
	// NoRecreate, AlwaysRecreateDeps and NoStart are up's
	// --no-recreate, --always-recreate-deps and --no-start (create).
	NoRecreate         bool `json:"noRecreate,omitempty"`
	AlwaysRecreateDeps bool `json:"alwaysRecreateDeps,omitempty"`
	NoStart            bool `json:"noStart,omitempty"`
	// RenewAnonVolumes is up -V.
	RenewAnonVolumes bool `json:"renewAnonVolumes,omitempty"`
	Wait             bool `json:"wait,omitempty"`
	RemoveOrphans    bool `json:"removeOrphans,omitempty"`
	// LocalMounts are directories (or files) of the client, served by the
	// client over the request's session (OpMount streams) and bound into
	// the apps; they need a session that is not detached.
	LocalMounts []LocalMount `json:"localMounts,omitempty"`
}

// PullRequest is POST /v1/projects/{project}/pull: pull the images of
// Services (all when empty) of Spec, which holds only what a pull reads
// (each service's image, platform and dependencies); Buildable are the
// services with a build section.
type PullRequest struct {
	Spec            spec.Project `json:"spec"`
	Buildable       []string     `json:"buildable,omitempty"`
	Services        []string     `json:"services,omitempty"`
	IncludeDeps     bool         `json:"includeDeps,omitempty"`
	IgnoreBuildable bool         `json:"ignoreBuildable,omitempty"`
	IgnoreFailures  bool         `json:"ignoreFailures,omitempty"`
	Missing         bool         `json:"missing,omitempty"`
}

// PushRequest is POST /v1/projects/{project}/push: push the images of
// Services (all when empty) of Spec, reduced as a pull's; Logins are
// the client's registry logins for the hosts they go to, used for this
// push alone (never the server's own, never stored).
type PushRequest struct {
	Spec           spec.Project    `json:"spec"`
	Buildable      []string        `json:"buildable,omitempty"`
	Services       []string        `json:"services,omitempty"`
	IncludeDeps    bool            `json:"includeDeps,omitempty"`
	IgnoreFailures bool            `json:"ignoreFailures,omitempty"`
	Logins         []RegistryLogin `json:"logins,omitempty"`
}

// RegistryLogin is a registry host's login.
type RegistryLogin struct {
	Host          string `json:"host"`
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	IdentityToken string `json:"identityToken,omitempty"`
}

// BuildRequest is POST /v1/projects/{project}/build: build the images
// of Services (all with a build section when empty) of Spec, reading
// what they need from the client over the request's session (OpBuild
// streams named by BuildID).
type BuildRequest struct {
	Spec     spec.Project      `json:"spec"`
	Services []string          `json:"services,omitempty"`
	BuildID  string            `json:"buildID"`
	NoCache  bool              `json:"noCache,omitempty"`
	Pull     bool              `json:"pull,omitempty"`
	Args     map[string]string `json:"args,omitempty"`
}

// BuildResult ends a build stream: the images built.
type BuildResult struct {
	Images []BuiltImage `json:"images"`
}

// BuiltImage is one image a build made.
type BuiltImage struct {
	Service string `json:"service"`
	Image   string `json:"image"`
	ID      string `json:"id"`
}

// UpResult ends an up stream.
type UpResult struct {
	Orphans []backends.Container `json:"orphans,omitempty"`
}

// DownRequest is POST /v1/projects/{project}/down.
type DownRequest struct {
	Spec          *spec.Project  `json:"spec,omitempty"`
	Volumes       bool           `json:"volumes,omitempty"`
	RemoveOrphans bool           `json:"removeOrphans,omitempty"`
	Timeout       *time.Duration `json:"timeout,omitempty"`
}

// LifecycleRequest is POST /v1/projects/{project}/{start,stop,restart,kill,rm}.
type LifecycleRequest struct {
	Services []string       `json:"services,omitempty"`
	Timeout  *time.Duration `json:"timeout,omitempty"`
	Signal   string         `json:"signal,omitempty"`
	Spec     *spec.Project  `json:"spec,omitempty"`
	Volumes  bool           `json:"volumes,omitempty"`
	Stopped  bool           `json:"stopped,omitempty"`
}

// AdoptRequest is POST /v1/projects/{project}/adopt (an operator's): the
// tenant that gets a project nobody deployed through the server (the
// operator itself when empty). The answer names the tenant.
type AdoptRequest struct {
	Tenant string `json:"tenant,omitempty"`
}

// Removed is the answer of rm.
type Removed struct {
	Containers []backends.Container `json:"containers"`
}

// PortAnswer is GET /v1/projects/{project}/port.
type PortAnswer struct {
	Address string `json:"address"`
}

// ImageUse is one row of GET /v1/projects/{project}/images.
type ImageUse struct {
	Container string         `json:"container"`
	Image     backends.Image `json:"image"`
	Ref       string         `json:"ref"`
}

// Project is one row of GET /v1/projects.
type Project struct {
	Name       string `json:"name"`
	Containers int    `json:"containers"`
	Running    int    `json:"running"`
	// States counts the containers by state (compose ls's status).
	States   map[string]int `json:"states,omitempty"`
	Session  string         `json:"session,omitempty"`
	Detached bool           `json:"detached,omitempty"`
	// ConfigFiles are the Compose files the client loaded it from.
	ConfigFiles string `json:"configFiles,omitempty"`
}

// Frame is one line of a streamed answer (application/x-ndjson): progress
// while the work runs, then exactly one of Result or Error.
type Frame struct {
	Progress *progress.Event `json:"progress,omitempty"`
	// Build is a build's progress line (BuildKit's status as JSON, or a
	// builder's text line with its service).
	Build   json.RawMessage `json:"build,omitempty"`
	Warning string          `json:"warning,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// ExecStart is the first (text) message of an exec WebSocket from the
// client; Control messages follow as text, stdin as binary.
type ExecStart struct {
	Service    string             `json:"service"`
	Index      int                `json:"index,omitempty"`
	Cmd        []string           `json:"cmd"`
	Env        []string           `json:"env,omitempty"`
	User       string             `json:"user,omitempty"`
	WorkingDir string             `json:"workingDir,omitempty"`
	TTY        bool               `json:"tty,omitempty"`
	Stdin      bool               `json:"stdin,omitempty"`
	Privileged bool               `json:"privileged,omitempty"`
	Size       *backends.TermSize `json:"size,omitempty"`
	// AgentSession names a session of the caller that serves its
	// ssh-agent (OpAgent streams): exec --forward-agent.
	AgentSession string `json:"agentSession,omitempty"`
}

// Control is a text message on an exec WebSocket: a resize or the end of
// stdin from the client; the exit code (or error) from the server.
type Control struct {
	Resize   *backends.TermSize `json:"resize,omitempty"`
	CloseIn  bool               `json:"closeStdin,omitempty"`
	ExitCode *int               `json:"exitCode,omitempty"`
	Error    *Error             `json:"error,omitempty"`
	// Container is the container a run made (with its exit code, or
	// alone for a detached run).
	Container string `json:"container,omitempty"`
}

// AttachStart is the first message of an attach WebSocket
// (/v1/projects/{project}/attach-stdio, compose attach): the replica to
// join; the stream then goes as an exec's, and ends with the container's
// exit code.
type AttachStart struct {
	Service string `json:"service"`
	Index   int    `json:"index,omitempty"`
	Stdin   bool   `json:"stdin,omitempty"`
	TTY     bool   `json:"tty,omitempty"`
}

// WaitRequest is POST /v1/projects/{project}/wait's body (compose wait):
// the services whose first exit it waits for (empty: all); the Result
// is a WaitResult.
type WaitRequest struct {
	Services []string `json:"services,omitempty"`
}

// WaitResult is the exit code of the first container that exited.
type WaitResult struct {
	ExitCode int `json:"exitCode"`
}

// RunStart is the first message of a run WebSocket
// (/v1/projects/{project}/run): compose run's one-off container of
// Service, with Spec (the service's overrides applied) admitted as an
// up's. The stream then goes as an exec's.
type RunStart struct {
	Spec       spec.Project       `json:"spec"`
	Service    string             `json:"service"`
	Name       string             `json:"name,omitempty"`
	NoDeps     bool               `json:"noDeps,omitempty"`
	Detach     bool               `json:"detach,omitempty"`
	Remove     bool               `json:"rm,omitempty"`
	UseAliases bool               `json:"useAliases,omitempty"`
	Stdin      bool               `json:"stdin,omitempty"`
	TTY        bool               `json:"tty,omitempty"`
	Size       *backends.TermSize `json:"size,omitempty"`
}

// Stream ids prefix binary exec messages from the server.
const (
	StreamStdout byte = 1
	StreamStderr byte = 2
)

// Dial opens a session stream to a workload (port-forward, tunnel): the
// client writes it as one JSON line, the server answers with a DialReply
// line, then the stream carries the connection (TCP) or length-prefixed
// datagrams (UDP: 2-byte big-endian length, then the payload).
type Dial struct {
	Service string `json:"service"`
	Index   int    `json:"index,omitempty"`
	Port    int    `json:"port"`
	Proto   string `json:"proto,omitempty"` // tcp (default) or udp
	// Host is the address a companion beside its app dials (the server
	// sets it, over any a client sent); empty: the replica's loopback.
	Host string `json:"host,omitempty"`
}

// DialReply answers a Dial.
type DialReply struct {
	Error *Error `json:"error,omitempty"`
}

// CommitRequest is POST /v1/projects/{project}/commit: an image made of
// a service's container (compose commit). The answer is a CommitResult.
type CommitRequest struct {
	Service   string   `json:"service"`
	Index     int      `json:"index,omitempty"`
	Reference string   `json:"reference,omitempty"`
	Author    string   `json:"author,omitempty"`
	Message   string   `json:"message,omitempty"`
	Changes   []string `json:"changes,omitempty"`
	NoPause   bool     `json:"noPause,omitempty"`
}

// CommitResult names the committed image.
type CommitResult struct {
	ID string `json:"id"`
}
