package monitor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// Locks down Docker's restart delays (moby restartmanager): 100 ms,
// doubling, capped at a minute, reset by a run of 10 s or more.
func TestNextBackoff(t *testing.T) {
	for _, tc := range []struct{ prev, ran, want time.Duration }{
		{0, 0, 100 * time.Millisecond},
		{100 * time.Millisecond, time.Second, 200 * time.Millisecond},
		{25600 * time.Millisecond, 0, 51200 * time.Millisecond},
		{51200 * time.Millisecond, 0, time.Minute},
		{time.Minute, 0, time.Minute},
		{time.Minute, 10 * time.Second, 100 * time.Millisecond},
		{800 * time.Millisecond, 9 * time.Second, 1600 * time.Millisecond},
	} {
		if got := nextBackoff(tc.prev, tc.ran); got != tc.want {
			t.Errorf("nextBackoff(%v, ran %v) = %v, want %v", tc.prev, tc.ran, got, tc.want)
		}
	}
}

// Locks down the restart decision of each policy.
func TestShouldRestart(t *testing.T) {
	onFailure2 := RestartPolicy{Name: spec.RestartOnFailure, MaxRetries: 2}
	for _, tc := range []struct {
		p        RestartPolicy
		code     int
		restarts int
		stopped  bool
		want     bool
	}{
		{RestartPolicy{}, 1, 0, false, false},
		{RestartPolicy{Name: spec.RestartNo}, 1, 0, false, false},
		{RestartPolicy{Name: spec.RestartAlways}, 0, 99, false, true},
		{RestartPolicy{Name: spec.RestartAlways}, 1, 0, true, false},
		{RestartPolicy{Name: spec.RestartUnlessStopped}, 0, 0, false, true},
		{RestartPolicy{Name: spec.RestartUnlessStopped}, 0, 0, true, false},
		{RestartPolicy{Name: spec.RestartOnFailure}, 0, 0, false, false},
		{RestartPolicy{Name: spec.RestartOnFailure}, 1, 1000, false, true},
		{onFailure2, 1, 1, false, true},
		{onFailure2, 1, 2, false, false},
		{onFailure2, 1, 0, true, false},
	} {
		if got := shouldRestart(tc.p, tc.code, tc.restarts, tc.stopped); got != tc.want {
			t.Errorf("shouldRestart(%+v, exit %d, %d restarts, stopped %v) = %v", tc.p, tc.code, tc.restarts, tc.stopped, got)
		}
	}
}

// Locks down restart "no": the first exit is final, with its code, and
// Run returns.
func TestRestartNo(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{}, `exit 7`)
	r := wait(t, p.dir)
	if r.State.Status != StatusExited || r.State.ExitCode != 7 || r.State.RestartCount != 0 || r.Desired != DesiredRunning {
		t.Fatalf("state %+v, desired %s", r.State, r.Desired)
	}
	if Alive(r) || r.Monitor.Pid != 0 {
		t.Fatalf("a final record names monitor %+v", r.Monitor)
	}
	if err := p.result(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// Locks down on-failure:2: exactly two restarts, 100 ms then 200 ms
// apart at least (the backoff), then the last exit is final; a success
// ends on-failure at once.
func TestRestartOnFailureCountsRetries(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{Supervision: Supervision{Restart: RestartPolicy{Name: spec.RestartOnFailure, MaxRetries: 2}}},
		`echo run; exit 3`)
	r := wait(t, p.dir)
	if r.State.RestartCount != 2 || r.State.ExitCode != 3 || r.State.Status != StatusExited {
		t.Fatalf("state %+v", r.State)
	}
	runs := readEntries(t, filepath.Join(p.dir, logName))
	if len(runs) != 3 {
		t.Fatalf("%d runs logged, want 3", len(runs))
	}
	for i, min := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		if gap := runs[i+1].Time.Sub(runs[i].Time); gap < min {
			t.Errorf("restart %d came %v after the previous run, want the backoff of at least %v", i+1, gap, min)
		}
	}

	ok := startRun(t, Record{Supervision: Supervision{Restart: RestartPolicy{Name: spec.RestartOnFailure}}}, `exit 0`)
	if r := wait(t, ok.dir); r.State.RestartCount != 0 {
		t.Fatalf("on-failure restarted a success: %+v", r.State)
	}
}

// Locks down always and unless-stopped: exits of any code restart until a
// stop, which ends the restarting for good.
func TestRestartUntilStopped(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{spec.RestartAlways, spec.RestartUnlessStopped} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			p := startRun(t, Record{Supervision: Supervision{Restart: RestartPolicy{Name: policy}}}, `echo run; exit 0`)
			waitFor(t, 20*time.Second, "3 restarts", func() bool { return p.read(t).State.RestartCount >= 3 })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := Stop(ctx, p.dir, StopOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Final() || r.Desired != DesiredStopped {
				t.Fatalf("after stop: %s, desired %s", r.State.Status, r.Desired)
			}
			if err := p.result(t); err != nil {
				t.Fatalf("Run: %v", err)
			}
			n := r.State.RestartCount
			if got := strings.Count(logText(t, p.dir), "run\n"); got < n || got > n+1 {
				t.Fatalf("%d runs logged for %d restarts", got, n)
			}
			if again := p.read(t); again.State.RestartCount != n || !again.Final() {
				t.Fatalf("restarted after the stop: %+v", again.State)
			}
		})
	}
}
