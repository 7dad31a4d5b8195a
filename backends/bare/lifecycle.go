package bare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// MonitorCommand is the hidden subcommand a monitor runs: `cornus monitor
// bare <id>`.
var MonitorCommand = []string{"monitor", Name}

// Start starts the container under a new detached monitor, which keeps it
// supervised after this process exits.
func (b *Backend) Start(ctx context.Context, id string) error {
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return err
	}
	// A live monitor already runs it, or is starting it (a cornus killed
	// mid-up spawned it): that is the container started, once that
	// monitor says so.
	if r := b.store().RecordOf(st.ID); !r.Final() && monitor.Alive(r) {
		return b.awaitStarted(ctx, st)
	}
	exe, err := b.monitorBinary()
	if err != nil {
		return err
	}
	began := time.Now()
	for {
		_, err = monitor.Spawn(ctx, monitor.SpawnOptions{
			Store: b.records, Record: b.newRecord(st), Path: exe,
			Args: append(append([]string{}, MonitorCommand...), st.ID), Env: b.cfg.environ,
		})
		if !errdefs.IsConflict(err) {
			break
		}
		// The supervision lock is held. By another start (its record says
		// created, or its monitor lives): wait for it. By the monitor that
		// died, which the record still names: a killed process's lock is
		// let go only once all its threads are gone, a moment after its
		// main thread shows as a zombie. Spawn again then: nothing else
		// will supervise the container.
		r := b.store().RecordOf(st.ID)
		if r.Final() || r.State.Status == monitor.StatusCreated || monitor.Alive(r) {
			return b.awaitStarted(ctx, st)
		}
		if time.Since(began) > spawnPatience {
			return fmt.Errorf("start container %s: its dead monitor (pid %d) still holds the supervision lock: %w", st.Name, r.Monitor.Pid, errdefs.ErrUnavailable)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start container %s: waiting for its dead monitor's supervision lock: %w", st.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("start container %s: %w", st.Name, err)
	}
	return nil
}

// awaitStarted waits while another process's monitor is starting the
// container (its record still says created), so that Start returning
// means started as it does for the caller's own monitor.
func (b *Backend) awaitStarted(ctx context.Context, st stored) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	began := time.Now()
	for {
		r := b.store().RecordOf(st.ID)
		switch {
		case r.State.Status != monitor.StatusCreated:
			return nil
		case r.Monitor.Pid != 0 && !monitor.Alive(r):
			return fmt.Errorf("start container %s: the monitor starting it is gone: %w", st.Name, errdefs.ErrUnavailable)
		case r.Monitor.Pid == 0 && time.Since(began) > spawnPatience:
			// The other start never got its monitor going (it was killed).
			return fmt.Errorf("start container %s: another start of it did not finish; start it again: %w", st.Name, errdefs.ErrUnavailable)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start container %s: waiting for the start in progress: %w", st.Name, ctx.Err())
		case <-t.C:
		}
	}
}

// spawnPatience bounds the wait for another process's start to have a
// monitor.
const spawnPatience = 10 * time.Second

// monitorBinary is the cornus executable monitors run: this program, or
// CORNUS_MONITOR_BINARY (tests run from a test binary).
func (b *Backend) monitorBinary() (string, error) {
	if p := b.cfg.monitorBinary; p != "" {
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the cornus executable for the monitor: %w", err)
	}
	return exe, nil
}

// Stop stops the container through its monitor (signal, grace, SIGKILL);
// with no monitor left, it kills the container through the runtime itself.
func (b *Backend) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return err
	}
	so := monitor.StopOptions{Timeout: o.Timeout}
	if n, ok := signalNumber(o.Signal); ok {
		so.Signal = n
	}
	if st.Paused {
		// A frozen process cannot act on the stop signal: thaw it, as
		// dockerd does.
		_ = b.Unpause(ctx, st.ID)
		st.Paused = false
	}
	dir, _ := b.records.Dir(st.ID)
	_, err = monitor.Stop(ctx, dir, so)
	if errors.Is(err, monitor.ErrNoMonitor) {
		err = b.killOrphan(ctx, st.ID)
	}
	if err != nil {
		return fmt.Errorf("stop container %s: %w", st.Name, err)
	}
	b.event("stop", st)
	return nil
}

// Kill sends a signal through the monitor.
func (b *Backend) Kill(ctx context.Context, id, signal string) error {
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return err
	}
	sig, ok := signalNumber(signal)
	if !ok {
		sig = syscall.SIGKILL
	}
	dir, _ := b.records.Dir(st.ID)
	_, err = monitor.Kill(ctx, dir, sig)
	if errors.Is(err, monitor.ErrNoMonitor) {
		err = b.killOrphan(ctx, st.ID)
	}
	if err != nil {
		return fmt.Errorf("kill container %s: %w", st.Name, err)
	}
	b.event("kill", st)
	if sig == syscall.SIGKILL {
		// As dockerd does: a SIGKILLed container is seen stopped once
		// kill returns (it cannot ignore the signal; this is the reaping).
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, _ = monitor.Wait(wctx, dir)
	}
	return nil
}

// killOrphan ends a container whose monitor is gone and records the exit
// (its exit status went with its parent, the monitor: 137 is what a kill
// leaves).
func (b *Backend) killOrphan(ctx context.Context, id string) error {
	code := 137
	if err := b.rt.kill(ctx, id, int(syscall.SIGKILL), true); err != nil && !isNotFound(err) && !errdefs.IsConflict(err) {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		rs, err := b.rt.state(ctx, id)
		if err != nil || rs.Status == "stopped" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := b.rt.delete(ctx, id); err != nil {
		return err
	}
	r, err := b.records.Read(id)
	if err != nil {
		return nil
	}
	r.State.Status, r.State.ExitCode, r.State.FinishedAt, r.State.Pid = monitor.StatusExited, code, now(), 0
	r.Desired, r.Monitor = monitor.DesiredStopped, monitor.MonitorProcess{}
	return b.records.Write(r)
}

// Remove removes the container and what Create made for it: its runtime
// state, its root (unmounted, with its upper directory), network
// attachments and namespace, files, record, and with Volumes its
// anonymous volumes.
func (b *Backend) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return err
	}
	if r := b.store().RecordOf(st.ID); !r.Final() && r.State.Status != monitor.StatusCreated {
		if !o.Force {
			return fmt.Errorf("container %s is running: stop it first, or remove with force: %w", st.Name, errdefs.ErrConflict)
		}
		zero := time.Duration(0)
		if err := b.Stop(ctx, st.ID, backends.StopOptions{Signal: "SIGKILL", Timeout: &zero}); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	if err := b.rt.delete(ctx, st.ID); err != nil {
		return fmt.Errorf("remove container %s: %w", st.Name, err)
	}
	if err := unmount(b.cfg.rootfsDir(st.ID)); err != nil {
		return fmt.Errorf("remove container %s: %w", st.Name, err)
	}
	if st.Netns != "" && st.Spec.Network.Kind != "container" {
		if _, err := b.net.Detach(ctx, cni.DetachOptions{ContainerID: st.ID, Netns: st.Netns}); err != nil {
			return fmt.Errorf("remove container %s: %w", st.Name, err)
		}
		if err := b.net.RemoveNetns(ctx, st.ID); err != nil {
			return fmt.Errorf("remove container %s: %w", st.Name, err)
		}
	}
	if o.Volumes {
		for _, v := range st.Anonymous {
			_ = b.RemoveVolume(ctx, v, true)
		}
	}
	if err := b.records.Remove(st.ID); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove container %s: %w", st.Name, err)
	}
	if err := os.RemoveAll(b.cfg.containerDir(st.ID)); err != nil {
		return fmt.Errorf("remove container %s: %w", st.Name, err)
	}
	b.halfMade().DropStaleLock(st.ID) // a Create killed after it wrote container.json
	b.event("destroy", st)
	return nil
}

// Wait blocks until the container is not running and returns its exit
// code.
func (b *Backend) Wait(ctx context.Context, id string) (int, error) {
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return -1, err
	}
	dir, _ := b.records.Dir(st.ID)
	r, err := monitor.Wait(ctx, dir)
	if errors.Is(err, monitor.ErrNoMonitor) {
		return -1, fmt.Errorf("wait for %s: %w", st.Name, err)
	}
	if err != nil {
		return -1, fmt.Errorf("wait for %s: %w", st.Name, err)
	}
	return r.State.ExitCode, nil
}

// Logs copies the container's output from the monitor's log.
func (b *Backend) Logs(ctx context.Context, id string, o backends.LogOptions) error {
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return err
	}
	dir, _ := b.records.Dir(st.ID)
	return monitor.Logs(ctx, dir, monitor.LogOptions{Follow: o.Follow, Tail: o.Tail, Since: o.Since, Until: o.Until,
		Timestamps: o.Timestamps, Stdout: o.Stdout, Stderr: o.Stderr})
}

// Exec runs a process in the running container.
func (b *Backend) Exec(ctx context.Context, id string, o backends.ExecOptions) (int, error) {
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return -1, err
	}
	var resize chan [2]uint32
	if o.Resize != nil || o.Size != nil {
		resize = make(chan [2]uint32, 1)
		if o.Size != nil {
			resize <- [2]uint32{uint32(o.Size.Height), uint32(o.Size.Width)}
		}
		if o.Resize != nil {
			go func() {
				defer close(resize)
				for sz := range o.Resize {
					resize <- [2]uint32{uint32(sz.Height), uint32(sz.Width)}
				}
			}()
		}
	}
	stderr := o.Stderr
	if stderr == nil || o.TTY {
		stderr = o.Stdout
	}
	return b.execIn(ctx, st, execRequest{cmd: o.Cmd, env: o.Env, user: o.User, cwd: o.WorkingDir, tty: o.TTY,
		stdin: o.Stdin, stdout: o.Stdout, stderr: stderr, resize: resize, started: o.Started, privileged: o.Privileged})
}

// Restart stops the container (as Stop does) and starts it under a new
// monitor; a stopped container just starts.
func (b *Backend) Restart(ctx context.Context, id string, o backends.StopOptions) error {
	if err := b.Stop(ctx, id, o); err != nil {
		return err
	}
	if err := b.Start(ctx, id); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}
