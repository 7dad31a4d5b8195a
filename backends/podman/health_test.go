package podman

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down the driver's timing (Docker's, issue 9): the first probe one
// interval after the start, the start interval while starting within the
// start period, the interval after the previous probe; exit when the
// container exited or lost its healthcheck, patience between runs.
func TestSchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tm := healthTimings{Interval: 2 * time.Second, Timeout: time.Second, StartPeriod: 10 * time.Second, StartInterval: 500 * time.Millisecond}
	run := driverView{Status: "running", StartedAt: t0, Health: "starting", Check: true, Timings: tm}
	var s schedule
	if st := s.next(run, t0.Add(100*time.Millisecond)); st.probe || st.exit || st.wait != 400*time.Millisecond {
		t.Fatalf("starting: %+v, want a wait for the start interval", st)
	}
	if st := s.next(run, t0.Add(500*time.Millisecond)); !st.probe {
		t.Fatalf("start interval passed: %+v, want a probe", st)
	}
	s.lastProbe = t0.Add(600 * time.Millisecond)
	healthy := run
	healthy.Health = "healthy"
	if st := s.next(healthy, t0.Add(time.Second)); st.probe || st.wait != 1600*time.Millisecond {
		t.Fatalf("healthy: %+v, want the interval after the last probe", st)
	}
	later := healthy
	later.StartedAt = t0.Add(5 * time.Second) // restarted by its policy
	if st := s.next(later, t0.Add(6*time.Second)); st.probe || st.wait != time.Second {
		t.Fatalf("restarted: %+v, want the interval after the new start", st)
	}
	for _, status := range []string{"exited", "removing"} {
		v := run
		v.Status = status
		if st := s.next(v, t0); !st.exit {
			t.Fatalf("%s: %+v, want exit", status, st)
		}
	}
	if v := run; true {
		v.Check = false
		if st := s.next(v, t0); !st.exit {
			t.Fatalf("no healthcheck: %+v, want exit", st)
		}
	}
	var idle schedule
	stopped := run
	stopped.Status = "stopped"
	if st := idle.next(stopped, t0); st.exit || st.probe || st.wait != driverPoll {
		t.Fatalf("stopped: %+v, want a poll", st)
	}
	if st := idle.next(stopped, t0.Add(driverIdleLimit)); !st.exit {
		t.Fatalf("stopped for %s: %+v, want exit", driverIdleLimit, st)
	}
	paused := run
	paused.Status = "paused"
	if st := idle.next(paused, t0.Add(time.Hour)); st.exit || st.probe {
		t.Fatalf("paused: %+v, want a poll", st)
	}
}

// Locks down the timings a driver reads back from podman's config: Docker's
// defaults for zeros, the start interval from its label.
func TestTimingsOf(t *testing.T) {
	var d containerInspect
	if _, ok := timingsOf(d); ok {
		t.Fatal("no healthcheck read as one")
	}
	d.Config.Healthcheck = &healthConfig{Test: []string{"NONE"}}
	if _, ok := timingsOf(d); ok {
		t.Fatal("NONE read as a healthcheck")
	}
	d.Config.Healthcheck = &healthConfig{Test: []string{"CMD", "true"}, StartPeriod: time.Second}
	d.Config.Labels = map[string]string{labelHealthStartInterval: "250ms"}
	got, ok := timingsOf(d)
	want := healthTimings{Interval: defaultHealthInterval, Timeout: defaultHealthTimeout, StartPeriod: time.Second, StartInterval: 250 * time.Millisecond}
	if !ok || got != want {
		t.Fatalf("timings %+v, want %+v", got, want)
	}
}

// Locks down "restarting" on podman, which has no such state: a container
// between runs that its policy restarts (TestComposeCrashingDependency).
func TestRestarting(t *testing.T) {
	mk := func(status, policy string, max, count, code int) containerInspect {
		var d containerInspect
		d.State.Status, d.State.ExitCode, d.RestartCount = status, code, count
		d.HostConfig.RestartPolicy.Name, d.HostConfig.RestartPolicy.MaximumRetryCount = policy, max
		if status != "created" {
			d.State.StartedAt = time.Unix(1000, 0)
		}
		return d
	}
	for _, c := range []struct {
		d    containerInspect
		want bool
	}{
		{mk("stopped", spec.RestartAlways, 0, 3, 1), true},
		{mk("stopped", spec.RestartAlways, 0, 0, 1), true}, // the first exit
		{mk("configured", spec.RestartUnlessStopped, 0, 1, 0), true},
		{mk("stopped", spec.RestartOnFailure, 5, 2, 1), true},
		{mk("stopped", spec.RestartOnFailure, 2, 2, 1), false}, // retries spent
		{mk("stopped", spec.RestartOnFailure, 0, 2, 0), false}, // success
		{mk("exited", spec.RestartAlways, 0, 3, 1), false},     // stopped by a user
		{mk("created", spec.RestartAlways, 0, 0, 0), false},    // never ran
		{mk("stopped", spec.RestartNo, 0, 1, 1), false},
	} {
		if got := restarting(c.d); got != c.want {
			t.Errorf("%s %s (max %d) after %d restarts, exit %d: restarting = %v", c.d.State.Status, c.d.HostConfig.RestartPolicy.Name,
				c.d.HostConfig.RestartPolicy.MaximumRetryCount, c.d.RestartCount, c.d.State.ExitCode, got)
		}
	}
}

// Locks down podman 4.3's health_status events: the status is a field of
// the event, not an attribute.
func TestHealthEventMapping(t *testing.T) {
	var w eventWire
	line := `{"status":"health_status","Type":"container","Action":"health_status","Actor":{"ID":"abc","Attributes":{"name":"web","cornus.project":"p"}},"time":1,"timeNano":1000000001,"HealthStatus":"healthy"}`
	if err := json.Unmarshal([]byte(line), &w); err != nil {
		t.Fatal(err)
	}
	if e, ok := event(w, backends.EventOptions{}); !ok || e.Action != "health_status: healthy" {
		t.Fatalf("health event: %+v", e)
	}
}

// Locks down the driver's lock: one holder, found by others, released
// (and the file gone) when it ends; a stale file is no driver.
func TestDriverLock(t *testing.T) {
	dir := t.TempDir()
	id := strings.Repeat("ab", 32)
	l, ok, err := acquireDriverLock(dir, id)
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if !driverAlive(dir, id) {
		t.Fatal("held lock not seen")
	}
	if _, ok, err := acquireDriverLock(dir, id); err != nil || ok {
		t.Fatalf("second lock: %v %v, want refused", ok, err)
	}
	l.release()
	if driverAlive(dir, id) {
		t.Fatal("released lock still seen")
	}
	if _, err := os.Stat(driverLockPath(dir, id)); !os.IsNotExist(err) {
		t.Fatalf("lock file left: %v", err)
	}
	if err := os.WriteFile(driverLockPath(dir, id), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if driverAlive(dir, id) {
		t.Fatal("stale file seen as a driver")
	}
	if err := stopDriver(dir, id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(driverLockPath(dir, id)); !os.IsNotExist(err) {
		t.Fatalf("stale lock file left: %v", err)
	}
}

// Locks down podman's own healthchecks without systemd (issue 9): a
// started container gets one driver, podman's inspect turns healthy from
// the probes it ran, a second Start finds the driver, Restart replaces
// it, Stop and Remove end it and leave no lock file.
func TestHealthDriver(t *testing.T) {
	b, ctx := setup(t)
	if info, err := b.hostInfo(ctx); err == nil && info.schedulesHealthchecks() {
		t.Skip("podman schedules healthchecks itself on this host (systemd): no driver")
	}
	retries := 50
	app := spec.App{Name: "app", Command: sh("trap 'exit 0' TERM; sleep 1; touch /tmp/ready; while true; do sleep 0.1; done"),
		Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "test", "-f", "/tmp/ready"}, Interval: spec.DurationOf(200 * time.Millisecond), Retries: &retries}}
	c := started(t, b, unique("hc"), app)
	dir := driverDir(b.cfg)
	driver := func() int {
		t.Helper()
		f, err := os.Open(driverLockPath(dir, c.ID))
		if err != nil || !driverAlive(dir, c.ID) {
			return 0
		}
		defer f.Close()
		pid := readPid(f)
		if !isDriverProcess(pid, c.ID) {
			t.Fatalf("lock of %s names pid %d, not its driver", c.ID, pid)
		}
		return pid
	}
	first := driver()
	if first == 0 {
		t.Fatal("no driver after Start")
	}
	eventually(t, 20*time.Second, "podman's health turning healthy", func() bool {
		d, err := b.Inspect(ctx, c.ID)
		return err == nil && d.Health == backends.HealthHealthy && len(d.HealthLog) > 0
	})
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if again := driver(); again != first {
		t.Fatalf("second Start: driver %d, want %d kept", again, first)
	}
	if err := b.Restart(ctx, c.Name, backends.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if next := driver(); next == 0 || next == first || isDriverProcess(first, c.ID) {
		t.Fatalf("after Restart: driver %d (before %d, still running: %v)", next, first, isDriverProcess(first, c.ID))
	}
	gone := func(what string) {
		t.Helper()
		if pid := driver(); pid != 0 {
			t.Fatalf("after %s: driver %d still running", what, pid)
		}
		if _, err := os.Stat(driverLockPath(dir, c.ID)); !os.IsNotExist(err) {
			t.Fatalf("after %s: lock file left (%v)", what, err)
		}
	}
	if err := b.Stop(ctx, c.Name, backends.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	gone("Stop")
	if err := b.Start(ctx, c.ID); err != nil || driver() == 0 {
		t.Fatalf("Start after Stop: %v, driver %d", err, driver())
	}
	if err := b.Remove(ctx, c.ID, backends.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	gone("Remove")
}
