package podman

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/envlist"
)

// Docker's healthcheck defaults. Podman's API applies none (its CLI does):
// a zero timeout fails every probe, zero retries makes the first failure
// unhealthy. Create writes them into podman's config.
const (
	defaultHealthInterval      = 30 * time.Second
	defaultHealthTimeout       = 30 * time.Second
	defaultHealthRetries       = 3
	defaultHealthStartInterval = 5 * time.Second
)

// labelHealthStartInterval carries a healthcheck's start interval, which
// podman 4's config has no field for; the driver schedules by it.
const labelHealthStartInterval = "cornus.podman.health-start-interval"

// Driver bounds.
const (
	// probeSlack is how long past its timeout the driver waits for one
	// probe's answer (podman 4 lets a probe run past its timeout and only
	// then records the failure).
	probeSlack = 10 * time.Second
	// driverIdleLimit is how long a container may stay neither running nor
	// paused nor exited (podman's "stopped" between an exit and its
	// cleanup or restart) before the driver gives up on it.
	driverIdleLimit = time.Minute
	// driverPoll is how often the driver looks at a container that is not
	// running, or at a service that does not answer.
	driverPoll = 500 * time.Millisecond
)

// DriverCommand is the hidden subcommand a healthcheck driver runs:
// `cornus podman-health <container ID>`.
var DriverCommand = []string{"podman-health"}

// healthTimings are what a driver schedules probes by.
type healthTimings struct {
	Interval, Timeout, StartPeriod, StartInterval time.Duration
}

// timingsOf reads the container's healthcheck from its inspect, with
// Docker's defaults for what is unset; ok is false when it has none.
func timingsOf(d containerInspect) (healthTimings, bool) {
	h := d.Config.Healthcheck
	if h == nil || len(h.Test) == 0 || h.Test[0] == "NONE" {
		return healthTimings{}, false
	}
	t := healthTimings{
		Interval: durationOr(h.Interval, defaultHealthInterval), Timeout: durationOr(h.Timeout, defaultHealthTimeout),
		StartPeriod: h.StartPeriod, StartInterval: defaultHealthStartInterval,
	}
	if v, err := time.ParseDuration(d.Config.Labels[labelHealthStartInterval]); err == nil && v > 0 {
		t.StartInterval = v
	}
	return t, true
}

func durationOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// driverView is what one inspect tells the driver.
type driverView struct {
	Status    string // podman's own state word
	StartedAt time.Time
	Health    string // podman's health status
	Check     bool   // the container has a healthcheck
	Timings   healthTimings
}

func viewOf(d containerInspect) driverView {
	v := driverView{Status: d.State.Status, StartedAt: d.State.StartedAt}
	if d.State.Health != nil {
		v.Health = d.State.Health.Status
	}
	v.Timings, v.Check = timingsOf(d)
	return v
}

// step is the driver's next move: exit (why says so), or wait and then
// probe (probe) or look again (!probe).
type step struct {
	exit  bool
	why   string
	probe bool
	wait  time.Duration
}

// schedule is Docker's probe timing over podman's states: the first probe
// one interval after the start, the next one interval after the previous
// probe ended; the start interval instead while the container is starting
// within its start period.
type schedule struct {
	lastProbe time.Time // when the previous probe ended
	idleSince time.Time // first look that found the container idle
}

// next decides from one look at the container, at time now.
func (s *schedule) next(v driverView, now time.Time) step {
	switch v.Status {
	case "exited", "removing", "dead", "unknown":
		return step{exit: true, why: "container " + v.Status}
	case "running":
		s.idleSince = time.Time{}
	case "paused", "stopping":
		s.idleSince = time.Time{}
		return step{wait: driverPoll}
	default: // stopped (restarting, or before its cleanup), created, configured, initialized
		if s.idleSince.IsZero() {
			s.idleSince = now
		}
		if now.Sub(s.idleSince) >= driverIdleLimit {
			return step{exit: true, why: fmt.Sprintf("container %s for %s", v.Status, driverIdleLimit)}
		}
		return step{wait: driverPoll}
	}
	if !v.Check {
		return step{exit: true, why: "no healthcheck"}
	}
	t := v.Timings
	wait := t.Interval
	if v.Health == "starting" && now.Sub(v.StartedAt) < t.StartPeriod {
		wait = t.StartInterval
	}
	base := v.StartedAt
	if s.lastProbe.After(base) {
		base = s.lastProbe
	}
	if due := base.Add(wait); due.After(now) {
		return step{wait: due.Sub(now)}
	}
	return step{probe: true}
}

// driver probes one container's healthcheck through podman's own
// healthcheck endpoint (GET /libpod/containers/{id}/healthcheck runs the
// test once and records the result in podman's health state), for a
// service that cannot schedule them itself (no systemd).
type driver struct {
	cli    *client
	id     string
	giveUp time.Duration // how long the service may not answer
	log    *log.Logger
}

// run probes until the container is gone, exits or has no healthcheck,
// the service stayed unreachable for giveUp, or ctx ends.
func (d *driver) run(ctx context.Context) {
	var s schedule
	var unreachable time.Time
	for {
		var ins containerInspect
		err := d.cli.call(ctx, request{method: "GET", path: containerPath(d.id, "json")}, &ins)
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			return
		case errdefs.IsNotFound(err):
			d.log.Printf("container %s is gone", d.id)
			return
		case errdefs.IsUnavailable(err):
			if unreachable.IsZero() {
				unreachable = now
			}
			if now.Sub(unreachable) >= d.giveUp {
				d.log.Printf("container %s: giving up after %s: %v", d.id, now.Sub(unreachable).Round(time.Second), err)
				return
			}
			sleep(ctx, driverPoll)
			continue
		case err != nil:
			d.log.Printf("container %s: %v", d.id, err)
			sleep(ctx, driverPoll)
			continue
		}
		unreachable = time.Time{}
		st := s.next(viewOf(ins), now)
		if st.exit {
			d.log.Printf("container %s: %s: done", d.id, st.why)
			return
		}
		if !st.probe {
			sleep(ctx, st.wait)
			continue
		}
		err = d.probe(ctx, viewOf(ins).Timings.Timeout)
		s.lastProbe = time.Now()
		if errdefs.IsNotFound(err) {
			d.log.Printf("container %s is gone", d.id)
			return
		}
	}
}

// probe runs the healthcheck once. Podman answers 409 for a container
// that stopped meanwhile and 500 for a probe past its timeout (recorded
// as a failure all the same); the next look sorts those out.
func (d *driver) probe(ctx context.Context, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, timeout+probeSlack)
	defer cancel()
	err := d.cli.call(pctx, request{method: "GET", path: containerPath(d.id, "healthcheck")}, nil)
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// RunHealthDriver is the healthcheck driver process (DriverCommand) for
// container id: it takes the container's driver lock (another driver
// holding it means there is nothing to do), tells its spawner it is
// ready, and probes until the container is gone, exits, or ctx ends.
// environ names the endpoint with CORNUS_PODMAN_SOCKET (Backend.spawnDriver
// sets it; a driver never starts a service of its own).
func RunHealthDriver(ctx context.Context, environ []string, id string) error {
	cfg, err := configFrom(environ)
	if err != nil {
		return err
	}
	if cfg.endpoint == nil {
		return fmt.Errorf("podman healthcheck driver: %s is required: %w", EnvSocket, errdefs.ErrInvalidArgument)
	}
	giveUp := defaultDriverGiveUp
	if v, err := time.ParseDuration(envlist.Get(environ, envDriverGiveUp)); err == nil && v >= 0 {
		giveUp = v
	}
	ready := readyPipeFrom(environ)
	lock, ok, err := acquireDriverLock(driverDir(cfg), id)
	if err != nil || !ok {
		ready.close()
		return err // held by another driver: nothing to do
	}
	defer lock.release()
	ready.signal()
	ep := *cfg.endpoint
	cli := newClient(func() endpoint { return ep })
	defer cli.http.CloseIdleConnections()
	d := &driver{cli: cli, id: id, giveUp: giveUp, log: log.New(os.Stderr, fmt.Sprintf("podman-health[%d] ", os.Getpid()), log.LstdFlags)}
	d.run(ctx)
	return nil
}
