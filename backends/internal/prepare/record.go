package prepare

import (
	"cmp"
	"syscall"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

// Record is the monitor record of a created container: stopped, with
// the spec's restart policy, stop signal and grace, stdio and
// healthcheck; logMaxBytes and eventsDir are the backend's settings.
func Record(id, name string, cs backends.ContainerSpec, logMaxBytes int64, eventsDir string) monitor.Record {
	r := monitor.Record{
		Version: monitor.RecordVersion, ID: id, Name: name, Image: cs.Image, Labels: cs.Labels, Desired: monitor.DesiredStopped,
		State: monitor.State{Status: monitor.StatusCreated},
		Supervision: monitor.Supervision{
			Restart:     spec.RestartPolicy{Name: cmp.Or(cs.Restart.Name, spec.RestartNo), MaxRetries: cs.Restart.MaxRetries},
			StopGrace:   cs.StopTimeout,
			LogMaxBytes: logMaxBytes,
			OpenStdin:   cs.StdinOpen,
			StdinOnce:   cs.StdinOnce,
			TTY:         cs.TTY,
			Events:      eventsDir,
		},
	}
	r.Supervision.StopSignal = syscall.Signal(cs.StopSignal)
	if h := cs.Healthcheck; h != nil && !h.Disabled && len(h.Test) > 0 {
		r.Supervision.Healthcheck = &monitor.Healthcheck{Test: h.Test, Interval: h.Interval, Timeout: h.Timeout,
			StartPeriod: h.StartPeriod, StartInterval: h.StartInterval, Retries: h.Retries}
	}
	return r
}
