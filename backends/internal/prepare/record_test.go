package prepare

import (
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

// Record: created and stopped, restart "no" by default, the stop signal
// by number, a healthcheck only when it has a test.
func TestRecord(t *testing.T) {
	cs := backends.ContainerSpec{Image: "img", StopSignal: spec.Signal(syscall.SIGINT), TTY: true,
		Healthcheck: &backends.Healthcheck{Test: []string{"CMD", "true"}, Interval: time.Second}}
	r := Record("id1", "c", cs, 1<<20, "/events")
	if r.ID != "id1" || r.Name != "c" || r.Desired != monitor.DesiredStopped || r.State.Status != monitor.StatusCreated {
		t.Fatalf("record %+v", r)
	}
	s := r.Supervision
	if s.Restart.Name != spec.RestartNo || s.StopSignal != syscall.SIGINT || !s.TTY || s.LogMaxBytes != 1<<20 || s.Events != "/events" {
		t.Fatalf("supervision %+v", s)
	}
	if s.Healthcheck == nil || s.Healthcheck.Interval != time.Second {
		t.Fatalf("healthcheck %+v", s.Healthcheck)
	}
	cs.Healthcheck, cs.StopSignal, cs.Restart.Name = &backends.Healthcheck{}, 0, "always"
	if s := Record("id1", "c", cs, 0, "").Supervision; s.Healthcheck != nil || s.StopSignal != 0 || s.Restart.Name != "always" {
		t.Fatalf("supervision %+v", s)
	}
}
