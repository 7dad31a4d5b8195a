package monitor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Locks down Docker's probe handling (moby daemon/health.go): failures
// inside the start period do not count while starting, a success makes
// healthy and clears the streak, retries failures in a row make
// unhealthy, and the log keeps the last five results.
func TestApplyProbe(t *testing.T) {
	started := time.Unix(1000, 0)
	hc := Healthcheck{StartPeriod: 10 * time.Second, Retries: 2}
	probe := func(at time.Duration, code int) HealthResult {
		return HealthResult{Start: started.Add(at), ExitCode: code}
	}
	h := Health{Status: HealthStarting}
	steps := []struct {
		r      HealthResult
		status string
		streak int
	}{
		{probe(time.Second, 1), HealthStarting, 0},     // in the start period: not counted
		{probe(11*time.Second, 1), HealthStarting, 1},  // past it: counted
		{probe(12*time.Second, 0), HealthHealthy, 0},   // success
		{probe(13*time.Second, 1), HealthHealthy, 1},   // one failure: still healthy
		{probe(14*time.Second, 1), HealthUnhealthy, 2}, // retries reached
		{probe(15*time.Second, 0), HealthHealthy, 0},   // recovers
	}
	for i, s := range steps {
		prev := h
		h = applyProbe(h, s.r, started, hc)
		if h.Status != s.status || h.FailingStreak != s.streak {
			t.Fatalf("step %d: %s streak %d, want %s streak %d", i, h.Status, h.FailingStreak, s.status, s.streak)
		}
		if len(prev.Log) == len(h.Log) && len(h.Log) < HealthLogSize {
			t.Fatalf("step %d: result not logged", i)
		}
	}
	if len(h.Log) != HealthLogSize || !h.Log[HealthLogSize-1].Start.Equal(steps[5].r.Start) {
		t.Fatalf("log %v: want the last %d results", h.Log, HealthLogSize)
	}
	// A starting container with no start period counts every failure,
	// with Docker's default of 3 retries.
	h = Health{Status: HealthStarting}
	for range 3 {
		h = applyProbe(h, probe(time.Second, 1), started, Healthcheck{})
	}
	if h.Status != HealthUnhealthy {
		t.Fatalf("3 failures with default retries: %s", h.Status)
	}
}

// Locks down the probe cadence: start interval only while starting
// inside the start period, Docker's defaults otherwise.
func TestProbeInterval(t *testing.T) {
	hc := Healthcheck{StartPeriod: time.Minute, StartInterval: time.Second, Interval: 7 * time.Second}
	for _, tc := range []struct {
		status string
		since  time.Duration
		want   time.Duration
	}{
		{HealthStarting, 0, time.Second},
		{HealthStarting, 2 * time.Minute, 7 * time.Second},
		{HealthHealthy, 0, 7 * time.Second},
	} {
		if got := probeInterval(hc, tc.status, tc.since); got != tc.want {
			t.Errorf("%s after %v: %v, want %v", tc.status, tc.since, got, tc.want)
		}
	}
	if got := probeInterval(Healthcheck{}, HealthStarting, 0); got != DefaultInterval {
		t.Errorf("defaults: %v, want %v", got, DefaultInterval)
	}
}

// Locks down healthchecks on a live container: starting while probes fail
// in the start period, healthy once one passes, unhealthy after retries
// failures, at most five results kept.
func TestHealthTransitions(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "healthy")
	hc := &Healthcheck{Test: []string{"CMD-SHELL", "echo probing; test -f " + flag},
		Interval: 50 * time.Millisecond, StartInterval: 20 * time.Millisecond, StartPeriod: 30 * time.Second, Retries: 2}
	p := startRun(t, Record{Supervision: Supervision{Healthcheck: hc}}, `while :; do sleep 0.05; done`)
	health := func() Health {
		if h := p.read(t).State.Health; h != nil {
			return *h
		}
		return Health{}
	}
	waitFor(t, 20*time.Second, "three failed probes", func() bool { return len(health().Log) >= 3 })
	if h := health(); h.Status != HealthStarting || h.FailingStreak != 0 || h.Log[0].ExitCode != 1 || h.Log[0].Output != "probing\n" {
		t.Fatalf("failing in the start period: %+v", h)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "healthy", func() bool { return health().Status == HealthHealthy })
	os.Remove(flag)
	waitFor(t, 20*time.Second, "unhealthy", func() bool { return health().Status == HealthUnhealthy })
	h := health()
	if h.FailingStreak < 2 || len(h.Log) > HealthLogSize {
		t.Fatalf("unhealthy: %+v", h)
	}
	if r := p.read(t); r.State.Status != StatusRunning {
		t.Fatalf("an unhealthy container was %s: Docker does not restart it", r.State.Status)
	}
}

// Locks down a probe past its timeout: exit -1 with Docker's message, and
// the probe is ended.
func TestHealthProbeTimeout(t *testing.T) {
	t.Parallel()
	hc := &Healthcheck{Test: []string{"CMD", "sleep", "30"}, Interval: 50 * time.Millisecond, Timeout: 100 * time.Millisecond, Retries: 1}
	p := startRun(t, Record{Supervision: Supervision{Healthcheck: hc}}, `while :; do sleep 0.05; done`)
	waitFor(t, 20*time.Second, "a timed-out probe", func() bool {
		h := p.read(t).State.Health
		return h != nil && len(h.Log) > 0
	})
	h := p.read(t).State.Health
	r := h.Log[0]
	if r.ExitCode != -1 || !strings.Contains(r.Output, "exceeded timeout") || r.End.Sub(r.Start) > 10*time.Second || h.Status != HealthUnhealthy {
		t.Fatalf("timed-out probe: %+v, status %s", r, h.Status)
	}
}
