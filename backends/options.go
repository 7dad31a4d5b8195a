package backends

import (
	"io"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// ListOptions filter by labels (all must match; a value of "" only requires
// the key) and, for containers, include stopped ones with All.
type ListOptions struct {
	Labels map[string]string
	All    bool
}

// StopOptions bound a graceful stop. Signal 0 is the container's own stop
// signal; Timeout nil means the container's own grace period.
type StopOptions struct {
	Signal  spec.Signal
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

// NetworkSpec asks for a project network.
type NetworkSpec struct {
	Project string
	Key     string // key in spec.Project.Networks
	Network spec.Network
	Labels  map[string]string
}

// RuntimeName is the network's name on the runtime: its own, else
// Compose's <project>_<key> (see spec.RuntimeName).
func (n NetworkSpec) RuntimeName() string { return RuntimeName(n.Project, n.Key, n.Network.Name) }

// VolumeSpec asks for a named volume.
type VolumeSpec struct {
	Project string
	Key     string
	Volume  spec.Volume
	Labels  map[string]string
}

// RuntimeName is the volume's name on the runtime: its own, else
// Compose's <project>_<key> (see spec.RuntimeName).
func (v VolumeSpec) RuntimeName() string { return RuntimeName(v.Project, v.Key, v.Volume.Name) }

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

// MatchLabels reports whether have matches the filter want: every key of
// want present, with want's value unless that is "".
func MatchLabels(have, want map[string]string) bool {
	for k, v := range want {
		got, ok := have[k]
		if !ok || (v != "" && got != v) {
			return false
		}
	}
	return true
}
