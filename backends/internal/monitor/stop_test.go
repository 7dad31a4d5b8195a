package monitor

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

func stopCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Locks down a graceful stop: a process that traps SIGTERM exits with its
// own code well before the grace, and the record ends stopped.
func TestStopTrappingProcessExitsWithItsCode(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{Supervision: Supervision{StopGrace: ptr(20 * time.Second), Restart: RestartPolicy{Name: spec.RestartAlways}}},
		`trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done`)
	waitFor(t, 20*time.Second, "the trap", func() bool { return strings.Contains(logText(t, p.dir), "ready") })
	begin := time.Now()
	r, err := Stop(stopCtx(t), p.dir, StopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.State.ExitCode != 3 || r.State.Status != StatusExited || r.Desired != DesiredStopped || r.State.RestartCount != 0 {
		t.Fatalf("after stop: %+v desired %s", r.State, r.Desired)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Fatalf("a trapping process took %v to stop: it was killed at the grace", took)
	}
}

// Locks down the grace: a process ignoring SIGTERM is SIGKILLed when the
// stop's timeout passes (not at the record's 10 s default).
func TestStopKillsAtGrace(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{Supervision: Supervision{StopGrace: ptr(10 * time.Second)}},
		`trap '' TERM; echo ready; while :; do sleep 0.05; done`)
	waitFor(t, 20*time.Second, "the trap", func() bool { return strings.Contains(logText(t, p.dir), "ready") })
	begin := time.Now()
	r, err := Stop(stopCtx(t), p.dir, StopOptions{Timeout: ptr(500 * time.Millisecond)})
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	if r.State.ExitCode != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit code %d, want 137 (SIGKILL)", r.State.ExitCode)
	}
	if took < 500*time.Millisecond || took > 8*time.Second {
		t.Fatalf("stopped after %v: want the kill at the 500 ms grace", took)
	}
}

// Locks down kill: another signal is forwarded and the container keeps
// running; SIGKILL ends it for good despite restart always.
func TestKillForwardsAndKillEnds(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{Supervision: Supervision{Restart: RestartPolicy{Name: spec.RestartAlways}}},
		`trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.05; done`)
	waitFor(t, 20*time.Second, "the trap", func() bool { return strings.Contains(logText(t, p.dir), "ready") })
	r, err := Kill(stopCtx(t), p.dir, syscall.SIGUSR1)
	if err != nil || r.State.Status != StatusRunning {
		t.Fatalf("kill USR1: %v, %s", err, r.State.Status)
	}
	waitFor(t, 20*time.Second, "the trap to run", func() bool { return strings.Contains(logText(t, p.dir), "got-usr1") })
	st, err := Status(stopCtx(t), p.dir)
	if err != nil || st.State.Status != StatusRunning || st.State.Pid == 0 || st.Monitor.Pid == 0 {
		t.Fatalf("status: %v, %+v", err, st.State)
	}
	if _, err := Kill(stopCtx(t), p.dir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r = wait(t, p.dir)
	if r.State.ExitCode != 137 || r.State.RestartCount != 0 || r.Desired != DesiredStopped {
		t.Fatalf("after SIGKILL: %+v desired %s", r.State, r.Desired)
	}
	if _, err := Kill(stopCtx(t), p.dir, syscall.SIGUSR1); !errdefs.IsConflict(err) {
		t.Fatalf("kill of an exited container: %v, want Conflict", err)
	}
}

// Locks down stopping what is not supervised: an exited container or one
// created and never started is already stopped, not an error.
func TestStopUnsupervised(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{}, `exit 0`)
	wait(t, p.dir)
	if r, err := Stop(stopCtx(t), p.dir, StopOptions{}); err != nil || !r.Final() {
		t.Fatalf("stop exited: %v, %s", err, r.State.Status)
	}
	s := NewStore(t.TempDir())
	if err := s.Write(Record{ID: "new", State: State{Status: StatusCreated}}); err != nil {
		t.Fatal(err)
	}
	dir, _ := s.Dir("new")
	if r, err := Stop(stopCtx(t), dir, StopOptions{}); err != nil || r.State.Status != StatusCreated {
		t.Fatalf("stop created: %v, %s", err, r.State.Status)
	}
	if r, err := Wait(stopCtx(t), dir); err != nil || r.State.Status != StatusCreated {
		t.Fatalf("wait created: %v, %s", err, r.State.Status)
	}
}
