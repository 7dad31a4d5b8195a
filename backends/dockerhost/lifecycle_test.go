package dockerhost

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/statustext"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down the container lifecycle on a real dockerd: create with the
// spec's process settings, start, list by labels, inspect, logs split by
// stream, exec exit codes, pause, top, graceful stop, wait, remove.
func TestLifecycle(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	// A long grace: a stop that waited it out, instead of ending with the
	// TERM trap, is told apart from a slow daemon by a wide margin.
	grace := spec.Duration(30 * time.Second)
	app := spec.App{
		Name:            "web",
		Command:         sh(`echo out; echo err >&2; trap 'echo bye; exit 0' TERM; while true; do sleep 0.1; done`),
		Env:             map[string]string{"B": "2", "A": "1"},
		WorkingDir:      "/tmp",
		Hostname:        "webhost",
		Labels:          map[string]string{"team": "shop"},
		StopGracePeriod: &grace,
		Init:            new(bool),
	}
	c := createApp(t, b, project, app)
	if c.State != backends.StateCreated || statustext.Docker(c, time.Now()) != "Created" {
		t.Fatalf("after create: state %q", c.State)
	}
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}

	list, err := b.List(ctx, backends.ListOptions{Labels: map[string]string{backends.LabelProject: project, "team": ""}})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %+v", err, list)
	}
	if l := list[0]; l.ID != c.ID || l.Name != c.Name || !l.Running() || !strings.HasPrefix(statustext.Docker(l, time.Now()), "Up ") || l.App() != "web" || l.Labels["team"] != "shop" {
		t.Fatalf("list entry: %+v", l)
	}
	if l, _ := b.List(ctx, backends.ListOptions{Labels: map[string]string{backends.LabelProject: project, "team": "other"}}); len(l) != 0 {
		t.Fatalf("label value filter ignored: %+v", l)
	}

	d, err := b.Inspect(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pid == 0 || d.StartedAt.IsZero() || d.Created.IsZero() || d.Name != c.Name || d.State != backends.StateRunning {
		t.Fatalf("inspect: %+v", d)
	}
	cfg := d.Config
	if cfg.WorkingDir != "/tmp" || cfg.Hostname != "webhost" || cfg.StopTimeout == nil || *cfg.StopTimeout != 30 || cfg.RestartPolicy.Name != "no" {
		t.Fatalf("inspect config: %+v", cfg)
	}
	if i := strings.Join(cfg.Env, ","); !strings.Contains(i, "A=1,B=2") {
		t.Fatalf("env not sorted K=V: %v", cfg.Env)
	}

	eventually(t, 5*time.Second, "logs", func() bool {
		out, errOut := logsOf(t, b, c.ID)
		return out == "out\n" && errOut == "err\n"
	})

	// Exec: exit code propagated, streams split without a TTY.
	var out, errOut bytes.Buffer
	code, err := b.Exec(ctx, c.ID, backends.ExecOptions{Cmd: []string{"sh", "-c", "echo o; echo e >&2; pwd; exit 3"}, Stdout: &out, Stderr: &errOut})
	if err != nil || code != 3 || out.String() != "o\n/tmp\n" || errOut.String() != "e\n" {
		t.Fatalf("exec: code %d err %v stdout %q stderr %q", code, err, out.String(), errOut.String())
	}
	// Exec with stdin, env, user and workdir.
	out.Reset()
	var started string
	code, err = b.Exec(ctx, c.ID, backends.ExecOptions{
		Cmd: []string{"sh", "-c", "cat; echo $X; id -u; pwd"}, Env: []string{"X=y"}, User: "1000", WorkingDir: "/",
		Stdin: strings.NewReader("in\n"), Stdout: &out, Started: func(id string) { started = id },
	})
	if err != nil || code != 0 || out.String() != "in\ny\n1000\n/\n" || started == "" {
		t.Fatalf("exec stdin: code %d err %v out %q started %q", code, err, out.String(), started)
	}
	// Exec with a TTY and an initial size.
	out.Reset()
	code, err = b.Exec(ctx, c.ID, backends.ExecOptions{Cmd: []string{"sh", "-c", "sleep 0.2; stty size; exit 5"}, TTY: true, Size: &backends.TermSize{Height: 33, Width: 77}, Stdout: &out})
	if err != nil || code != 5 || trimmed(out.String()) != "33 77" {
		t.Fatalf("exec tty: code %d err %v out %q", code, err, out.String())
	}

	top, err := b.Top(ctx, c.ID, "")
	if err != nil || len(top.Processes) == 0 || len(top.Titles) == 0 {
		t.Fatalf("top: %v %+v", err, top)
	}
	if err := b.Pause(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if d, _ := b.Inspect(ctx, c.ID); d.State != backends.StatePaused || !strings.HasSuffix(statustext.Docker(d.Container, time.Now()), "(Paused)") {
		t.Fatalf("paused: %q", d.State)
	}
	if err := b.Unpause(ctx, c.ID); err != nil {
		t.Fatal(err)
	}

	// Graceful stop: the TERM trap exits well within the grace period.
	begin := time.Now()
	if err := b.Stop(ctx, c.ID, backends.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 15*time.Second {
		t.Fatalf("stop of a TERM-trapping container took %s: it waited for the 30 s grace, not for the trap", took)
	}
	if code, err := b.Wait(ctx, c.ID); err != nil || code != 0 {
		t.Fatalf("wait: %d %v", code, err)
	}
	d, err = b.Inspect(ctx, c.ID)
	if err != nil || d.State != backends.StateExited || d.FinishedAt.Before(d.StartedAt) || !strings.HasPrefix(statustext.Docker(d.Container, time.Now()), "Exited (0)") {
		t.Fatalf("after stop: %v %+v", err, d)
	}
	if l, _ := b.List(ctx, backends.ListOptions{Labels: map[string]string{backends.LabelProject: project}}); len(l) != 0 {
		t.Fatalf("List without All shows stopped containers: %+v", l)
	}
	if l, _ := b.List(ctx, backends.ListOptions{All: true, Labels: map[string]string{backends.LabelProject: project}}); len(l) != 1 || l[0].State != backends.StateExited {
		t.Fatalf("List All: %+v", l)
	}
	if err := b.Remove(ctx, c.ID, backends.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Inspect(ctx, c.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("inspect after remove: %v (want NotFound)", err)
	}
}

// Locks down the grace period: a container ignoring TERM is killed once
// StopOptions.Timeout passes, and a custom stop signal reaches it (by kill
// before API 1.42).
func TestStopGrace(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	t.Run("ignores TERM", func(t *testing.T) {
		c := createApp(t, b, project, spec.App{Name: "stubborn", Command: sh(`trap '' TERM; while true; do sleep 0.1; done`)})
		if err := b.Start(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		timeout := time.Second
		begin := time.Now()
		if err := b.Stop(ctx, c.ID, backends.StopOptions{Timeout: &timeout}); err != nil {
			t.Fatal(err)
		}
		took := time.Since(begin)
		if took < timeout || took > 8*time.Second {
			t.Fatalf("stop took %s, want about %s", took, timeout)
		}
		if code, _ := b.Wait(ctx, c.ID); code != 137 {
			t.Fatalf("exit code %d, want 137 (killed)", code)
		}
	})
	t.Run("custom signal", func(t *testing.T) {
		c := createApp(t, b, project, spec.App{Name: "usr1", Command: sh(`trap 'exit 7' USR1; trap '' TERM; while true; do sleep 0.1; done`)})
		if err := b.Start(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		timeout := 5 * time.Second
		begin := time.Now()
		if err := b.Stop(ctx, c.ID, backends.StopOptions{Signal: spec.Signal(syscall.SIGUSR1), Timeout: &timeout}); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(begin); took > 4*time.Second {
			t.Fatalf("stop with SIGUSR1 took %s", took)
		}
		if code, _ := b.Wait(ctx, c.ID); code != 7 {
			t.Fatalf("exit code %d, want 7 (USR1 trap)", code)
		}
	})
	t.Run("kill and restart", func(t *testing.T) {
		c := createApp(t, b, project, spec.App{Name: "k", Command: sh(`while true; do sleep 0.1; done`), StopSignal: "SIGKILL"})
		if err := b.Start(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := b.Restart(ctx, c.ID, backends.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		if d, _ := b.Inspect(ctx, c.ID); d.State != backends.StateRunning || d.Config.StopSignal != "SIGKILL" {
			t.Fatalf("after restart: %+v", d)
		}
		if err := b.Kill(ctx, c.ID, spec.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if code, _ := b.Wait(ctx, c.ID); code != 137 {
			t.Fatalf("exit code %d after kill", code)
		}
		if err := b.Kill(ctx, c.ID, 0); !errdefs.IsConflict(err) {
			t.Fatalf("kill of a stopped container: %v (want Conflict)", err)
		}
	})
}

// TestStaleTaskAnswer: dockerd's answer for a task containerd kept across
// a crash is recognised (it becomes backends.ErrStaleTask), other start
// failures are not.
func TestStaleTaskAnswer(t *testing.T) {
	for msg, want := range map[string]bool{
		"Error response from daemon: task 1619b0a149e901d64fc3e8a64b0c4707018dcbb19f7f288f41ddb9b8a1ca2922: already exists":                                           true,
		"Error response from daemon: failed to start shim: mkdir /tmp/c/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/98fd11955c2c: file exists: unknown": true,
		"Error response from daemon: Conflict. The container name \"/x\" is already in use":                                                                           false,
		"Error response from daemon: driver failed programming external connectivity: bind: address already in use":                                                   false,
	} {
		if got := staleTask.MatchString(msg); got != want {
			t.Errorf("%q: stale task = %v, want %v", msg, got, want)
		}
	}
}
