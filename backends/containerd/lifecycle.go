package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// MonitorCommand is the hidden subcommand a monitor runs: `cornus monitor
// containerd <id>`.
var MonitorCommand = []string{"monitor", Name}

// Start starts the container under a new detached monitor, which keeps it
// supervised after this process exits.
func (b *Backend) Start(ctx context.Context, id string) error {
	st, err := b.store().Find(b.ns(ctx), id)
	if err != nil {
		return err
	}
	// A live monitor already runs it, or is starting it (a cornus killed
	// mid-up spawned it): that is the container started.
	if r := b.store().RecordOf(st.ID); !r.Final() && monitor.Alive(r) {
		return b.awaitStarted(ctx, st.ID)
	}
	exe, err := b.monitorBinary()
	if err != nil {
		return err
	}
	_, err = monitor.Spawn(ctx, monitor.SpawnOptions{
		Store: b.records, Record: b.newRecord(st), Path: exe,
		Args: append(append([]string{}, MonitorCommand...), st.ID), Env: b.cfg.environ,
	})
	if errdefs.IsConflict(err) {
		return b.awaitStarted(ctx, st.ID) // another start won the race
	}
	if err != nil {
		return fmt.Errorf("start container %s: %w", st.Name, err)
	}
	return nil
}

// awaitStarted waits until another start's monitor got the container
// past "created" (running, or exited trying), as a Start of our own would
// have returned.
func (b *Backend) awaitStarted(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	for {
		r := b.store().RecordOf(id)
		if r.State.Status != monitor.StatusCreated || !monitor.Alive(r) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start container %s: another start's monitor (pid %d) did not start it: %w", id, r.Monitor.Pid, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startWait bounds the wait for another start in flight.
const startWait = time.Minute

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
// with no monitor left, it kills the task itself.
func (b *Backend) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	st, err := b.store().Find(b.ns(ctx), id)
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
	st, err := b.store().Find(b.ns(ctx), id)
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

// killOrphan ends a task whose monitor is gone and records the exit.
func (b *Backend) killOrphan(ctx context.Context, id string) error {
	ctx = b.ns(ctx)
	ctr, err := b.cli.LoadContainer(ctx, id)
	if err != nil {
		return err
	}
	code := 137
	if task, err := ctr.Task(ctx, nil); err == nil {
		if exit, err := task.Wait(ctx); err == nil {
			_ = task.Kill(ctx, syscall.SIGKILL)
			select {
			case st := <-exit:
				if c, _, err := st.Result(); err == nil {
					code = int(c)
				}
			case <-time.After(10 * time.Second):
			}
		}
		_, _ = task.Delete(ctx, client.WithProcessKill)
	}
	r, err := b.records.Read(id)
	if err != nil {
		return nil
	}
	r.State.Status, r.State.ExitCode, r.State.FinishedAt, r.State.Pid = monitor.StatusExited, code, time.Now().UTC(), 0
	r.Desired, r.Monitor = monitor.DesiredStopped, monitor.MonitorProcess{}
	return b.records.Write(r)
}

// Remove removes the container and what Create made for it: its task,
// snapshot, network attachments and namespace, files, record, and with
// Volumes its anonymous volumes.
func (b *Backend) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	ctx = b.ns(ctx)
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
	if ctr, err := b.cli.LoadContainer(ctx, st.ID); err == nil {
		if task, err := ctr.Task(ctx, nil); err == nil {
			_, _ = task.Delete(ctx, client.WithProcessKill)
		}
		if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("remove container %s: %w", st.Name, err)
		}
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
	b.event("destroy", st)
	return nil
}

// Wait blocks until the container is not running and returns its exit
// code.
func (b *Backend) Wait(ctx context.Context, id string) (int, error) {
	st, err := b.store().Find(b.ns(ctx), id)
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
	st, err := b.store().Find(b.ns(ctx), id)
	if err != nil {
		return err
	}
	dir, _ := b.records.Dir(st.ID)
	return monitor.Logs(ctx, dir, monitor.LogOptions{Follow: o.Follow, Tail: o.Tail, Since: o.Since, Until: o.Until,
		Timestamps: o.Timestamps, Stdout: o.Stdout, Stderr: o.Stderr})
}

// Exec runs a process in the running container.
func (b *Backend) Exec(ctx context.Context, id string, o backends.ExecOptions) (int, error) {
	ctx = b.ns(ctx)
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return -1, err
	}
	ctr, err := b.cli.LoadContainer(ctx, st.ID)
	if err != nil {
		return -1, err
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return -1, notRunning(st.Name)
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
	return b.execIn(ctx, ctr, task, execRequest{cmd: o.Cmd, env: o.Env, user: o.User, cwd: o.WorkingDir, tty: o.TTY,
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
