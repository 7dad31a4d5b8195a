package monitor

import (
	"syscall"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// RecordVersion is the format version written into every record.
const RecordVersion = 1

// Observed states, named as Docker names them. Exited and dead are final:
// no monitor acts on the record any more.
const (
	StatusCreated    = "created"
	StatusRunning    = "running"
	StatusRestarting = "restarting"
	StatusExited     = "exited"
	StatusDead       = "dead" // the monitor lost track of the process
)

// Desired states: what the user last asked for.
const (
	DesiredRunning = "running"
	DesiredStopped = "stopped"
)

// Health states.
const (
	HealthStarting  = "starting"
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
)

// Defaults applied where a setting is zero (Docker's).
const (
	DefaultStopGrace     = 10 * time.Second
	DefaultLogMaxBytes   = 16 << 20
	DefaultInterval      = 30 * time.Second
	DefaultTimeout       = 30 * time.Second
	DefaultStartInterval = 5 * time.Second
	DefaultRetries       = 3
	// HealthLogSize is how many probe results a record keeps.
	HealthLogSize = 5
)

// Record is record.json: everything a later cornus needs to know about
// one supervised container, with no daemon to ask.
type Record struct {
	Version     int               `json:"version"`
	ID          string            `json:"id"`
	Name        string            `json:"name,omitempty"`
	Image       string            `json:"image,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Supervision Supervision       `json:"supervision"`
	Desired     string            `json:"desired"`
	State       State             `json:"state"`
	Monitor     MonitorProcess    `json:"monitor"`
	Logs        LogFiles          `json:"logs"`
}

// Final reports whether no monitor will change the container's state any
// more: the main process exited for good.
func (r Record) Final() bool {
	return r.State.Status == StatusExited || r.State.Status == StatusDead
}

// Supervision is how the monitor runs the container: set by the backend
// when it spawns the monitor, read-only afterwards.
type Supervision struct {
	Restart     RestartPolicy  `json:"restart"`
	Healthcheck *Healthcheck   `json:"healthcheck,omitempty"`
	StopSignal  syscall.Signal `json:"stopSignal,omitempty"` // 0: SIGTERM
	// StopGrace is how long a stop waits before SIGKILL; nil: 10 s.
	StopGrace *time.Duration `json:"stopGrace,omitempty"`
	// LogMaxBytes rotates container.log past this size, keeping one old
	// generation; 0: 16 MiB.
	LogMaxBytes int64 `json:"logMaxBytes,omitempty"`
	// OpenStdin keeps the main process's stdin open (a pipe the monitor
	// holds) for attached clients to write into; StdinOnce closes it when
	// the first attached client's input ends.
	OpenStdin bool `json:"openStdin,omitempty"`
	StdinOnce bool `json:"stdinOnce,omitempty"`
	// TTY: the main process runs on a terminal (attach semantics differ).
	TTY bool `json:"tty,omitempty"`
	// Events, when set, is the directory of the backend's event journal:
	// the monitor appends start, die and health_status events to it.
	Events string `json:"events,omitempty"`
}

// RestartPolicy is the spec's (names spec.RestartNo and the rest; "" is
// "no"); MaxRetries (on-failure only) of 0 means unlimited, as in Docker.
type RestartPolicy = spec.RestartPolicy

// Healthcheck is Docker's healthcheck model; zero durations and retries
// take Docker's defaults. Test is ["CMD", args...] or ["CMD-SHELL",
// script]; ["NONE"] or an empty Test disables it.
type Healthcheck struct {
	Test          []string      `json:"test"`
	Interval      time.Duration `json:"interval,omitempty"`
	Timeout       time.Duration `json:"timeout,omitempty"`
	StartPeriod   time.Duration `json:"startPeriod,omitempty"`
	StartInterval time.Duration `json:"startInterval,omitempty"`
	Retries       int           `json:"retries,omitempty"`
}

// State is what the monitor observed.
type State struct {
	Status       string    `json:"status"`
	Pid          int       `json:"pid,omitempty"`
	ExitCode     int       `json:"exitCode"`
	Error        string    `json:"error,omitempty"`
	StartedAt    time.Time `json:"startedAt,omitzero"`
	FinishedAt   time.Time `json:"finishedAt,omitzero"`
	RestartCount int       `json:"restartCount"`
	OOMKilled    bool      `json:"oomKilled,omitempty"`
	Health       *Health   `json:"health,omitempty"`
}

// Health is the healthcheck state of the current run.
type Health struct {
	Status        string         `json:"status"`
	FailingStreak int            `json:"failingStreak"`
	Log           []HealthResult `json:"log,omitempty"` // oldest first, at most HealthLogSize
}

// HealthResult is one probe.
type HealthResult struct {
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	ExitCode int       `json:"exitCode"`
	Output   string    `json:"output"`
}

// MonitorProcess identifies the monitor supervising the container. The
// start time tells a live monitor from a process that reused its pid.
type MonitorProcess struct { //nolint:revive // Process is taken: the interface of a container's process
	Pid int `json:"pid,omitempty"`
	// StartTicks is field 22 of /proc/<pid>/stat: clock ticks after boot.
	StartTicks uint64    `json:"startTicks,omitempty"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	Socket     string    `json:"socket,omitempty"`
	// Namespaced: the monitor is the init of a pid namespace of its own (a
	// container's, as with the incus backend), so Pid is 1 there and means
	// nothing to the host; it is alive while its control socket answers.
	Namespaced bool `json:"namespaced,omitempty"`
}

// LogFiles are the files in the record directory holding output.
type LogFiles struct {
	Container string `json:"container"` // JSON lines, current generation
	Rotated   string `json:"rotated"`   // the one older generation
	Monitor   string `json:"monitor"`   // the monitor's own stderr
}
