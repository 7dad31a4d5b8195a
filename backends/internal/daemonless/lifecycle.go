package daemonless

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/records"
	"github.com/cornus-dev/cornus/spec"
)

// monitorArgs is the hidden subcommand a monitor of the named backend
// runs: `cornus monitor <backend> <id>`.
func monitorArgs(backend, id string) []string { return []string{"monitor", backend, id} }

// Start starts the container under a new detached monitor, which keeps it
// supervised after this process exits.
func (c *Core) Start(ctx context.Context, id string) error {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return err
	}
	// A live monitor already runs it, or is starting it (a cornus killed
	// mid-up spawned it): that is the container started, once that
	// monitor says so.
	if r := c.Store().RecordOf(st.ID); !r.Final() && monitor.Alive(r) {
		return c.awaitStarted(ctx, st)
	}
	exe, err := c.monitorBinary()
	if err != nil {
		return err
	}
	began := time.Now()
	for {
		_, err = monitor.Spawn(ctx, monitor.SpawnOptions{
			Store: c.Records, Record: c.newRecord(st), Path: exe,
			Args: monitorArgs(c.Cfg.Name, st.ID), Env: c.Cfg.Environ,
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
		r := c.Store().RecordOf(st.ID)
		if r.Final() || r.State.Status == monitor.StatusCreated || monitor.Alive(r) {
			return c.awaitStarted(ctx, st)
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
// means started as it does for the caller's own monitor. A monitor that
// died meanwhile, or a start that never got one going, ends the wait
// with Unavailable.
func (c *Core) awaitStarted(ctx context.Context, st records.Container) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	began := time.Now()
	for {
		r := c.Store().RecordOf(st.ID)
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
func (c *Core) monitorBinary() (string, error) {
	if p := c.Cfg.MonitorBinary; p != "" {
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the cornus executable for the monitor: %w", err)
	}
	return exe, nil
}

// Stop stops the container through its monitor (signal, grace, SIGKILL);
// with no monitor left, it kills the container through the runtime.
func (c *Core) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return err
	}
	so := monitor.StopOptions{Timeout: o.Timeout, Signal: syscall.Signal(o.Signal)}
	if st.Paused {
		// A frozen process cannot act on the stop signal: thaw it, as
		// dockerd does.
		_ = c.Unpause(ctx, st.ID)
		st.Paused = false
	}
	dir, _ := c.Records.Dir(st.ID)
	_, err = monitor.Stop(ctx, dir, so)
	if errors.Is(err, monitor.ErrNoMonitor) {
		err = c.killOrphan(ctx, st.ID)
	}
	if err != nil {
		return fmt.Errorf("stop container %s: %w", st.Name, err)
	}
	c.Event("stop", st)
	return nil
}

// Kill sends a signal through the monitor.
func (c *Core) Kill(ctx context.Context, id string, signal spec.Signal) error {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return err
	}
	sig := cmp.Or(signal, spec.SIGKILL)
	dir, _ := c.Records.Dir(st.ID)
	_, err = monitor.Kill(ctx, dir, syscall.Signal(sig))
	if errors.Is(err, monitor.ErrNoMonitor) {
		err = c.killOrphan(ctx, st.ID)
	}
	if err != nil {
		return fmt.Errorf("kill container %s: %w", st.Name, err)
	}
	c.Event("kill", st)
	if sig == spec.SIGKILL {
		// As dockerd does: a SIGKILLed container is seen stopped once
		// kill returns (it cannot ignore the signal; this is the reaping).
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, _ = monitor.Wait(wctx, dir)
	}
	return nil
}

// killOrphan ends a container whose monitor is gone and records the exit
// (the runtime's code: 137 where the status went with the monitor).
func (c *Core) killOrphan(ctx context.Context, id string) error {
	code, err := c.rt.KillOrphan(ctx, id)
	if err != nil {
		return err
	}
	r, err := c.Records.Read(id)
	if err != nil {
		return nil
	}
	r.State.Status, r.State.ExitCode, r.State.FinishedAt, r.State.Pid = monitor.StatusExited, code, time.Now().UTC(), 0
	r.Desired, r.Monitor = monitor.DesiredStopped, monitor.MonitorProcess{}
	return c.Records.Write(r)
}

// Remove removes the container and what Create made for it: the runtime's
// container, network attachments and namespace, files, record, and with
// Volumes its anonymous volumes.
func (c *Core) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return err
	}
	// A created container may still have a live monitor: a start that was
	// cut short (its caller killed) left it starting the process.
	if r := c.Store().RecordOf(st.ID); !r.Final() && (r.State.Status != monitor.StatusCreated || c.supervised(st.ID, r)) {
		if !o.Force {
			return fmt.Errorf("container %s is running: stop it first, or remove with force: %w", st.Name, errdefs.ErrConflict)
		}
		zero := time.Duration(0)
		if err := c.Stop(ctx, st.ID, backends.StopOptions{Signal: spec.SIGKILL, Timeout: &zero}); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	if err := c.rt.Delete(ctx, st.ID); err != nil {
		return fmt.Errorf("remove container %s: %w", st.Name, err)
	}
	if st.Netns != "" && st.Spec.Network.Kind != "container" {
		if _, err := c.Net.Detach(ctx, cni.DetachOptions{ContainerID: st.ID, Netns: st.Netns}); err != nil {
			return fmt.Errorf("remove container %s: %w", st.Name, err)
		}
		if err := c.Net.RemoveNetns(ctx, st.ID); err != nil {
			return fmt.Errorf("remove container %s: %w", st.Name, err)
		}
	}
	if o.Volumes {
		for _, v := range st.Anonymous {
			_ = c.RemoveVolume(ctx, v, true)
		}
	}
	if err := c.Records.Remove(st.ID); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove container %s: %w", st.Name, err)
	}
	if err := os.RemoveAll(c.Cfg.ContainerDir(st.ID)); err != nil {
		return fmt.Errorf("remove container %s: %w", st.Name, err)
	}
	c.halfMade().DropStaleLock(st.ID) // a Create killed after it wrote container.json
	c.Event("destroy", st)
	return nil
}

// supervised reports whether a monitor process supervises container id.
func (c *Core) supervised(id string, r monitor.Record) bool {
	dir, err := c.Records.Dir(id)
	return err == nil && monitor.AliveIn(dir, r)
}

// Wait blocks until the container is not running and returns its exit
// code.
func (c *Core) Wait(ctx context.Context, id string) (int, error) {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return -1, err
	}
	dir, _ := c.Records.Dir(st.ID)
	r, err := monitor.Wait(ctx, dir)
	if err != nil {
		return -1, fmt.Errorf("wait for %s: %w", st.Name, err)
	}
	return r.State.ExitCode, nil
}

// Restart stops the container (as Stop does) and starts it under a new
// monitor; a stopped container just starts.
func (c *Core) Restart(ctx context.Context, id string, o backends.StopOptions) error {
	if err := c.Stop(ctx, id, o); err != nil {
		return err
	}
	if err := c.Start(ctx, id); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}

// Pause freezes the container's processes.
func (c *Core) Pause(ctx context.Context, id string) error {
	st, _, err := c.Running(ctx, id)
	if err != nil {
		return err
	}
	if err := c.rt.Pause(ctx, st.ID); err != nil {
		return fmt.Errorf("pause %s: %w", st.Name, err)
	}
	return c.setPaused(st, true)
}

// Unpause thaws them.
func (c *Core) Unpause(ctx context.Context, id string) error {
	st, _, err := c.Running(ctx, id)
	if err != nil {
		return err
	}
	if err := c.rt.Resume(ctx, st.ID); err != nil {
		return fmt.Errorf("unpause %s: %w", st.Name, err)
	}
	return c.setPaused(st, false)
}

// setPaused records the freezer state where List and Inspect read it
// (asking the runtime per container would make ps one call per row).
func (c *Core) setPaused(st records.Container, paused bool) error {
	st.Paused = paused
	if err := c.Store().Write(st); err != nil {
		return err
	}
	action := "unpause"
	if paused {
		action = "pause"
	}
	c.Event(action, st)
	return nil
}

// Rename changes the container's name.
func (c *Core) Rename(ctx context.Context, id, name string) error {
	if err := localstore.ValidName(name); err != nil {
		return err
	}
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return err
	}
	if other, err := c.Store().ByName(ctx, name); err == nil && other != st.ID {
		return fmt.Errorf("rename %s to %s: the name is in use: %w", st.Name, name, errdefs.ErrConflict)
	}
	if err := c.rt.Rename(ctx, st.ID, name); err != nil {
		return fmt.Errorf("rename %s: %w", st.Name, err)
	}
	st.Name = name
	if err := c.Store().Write(st); err != nil {
		return err
	}
	c.Event("rename", st)
	return nil
}

// Running is the container and its init's pid, or a Conflict when it
// does not run.
func (c *Core) Running(ctx context.Context, id string) (records.Container, int, error) {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return st, 0, err
	}
	pid, err := c.rt.InitPid(ctx, st.ID)
	if err != nil || pid == 0 {
		return st, 0, NotRunning(st.Name)
	}
	return st, pid, nil
}

// NotRunning is the Conflict for a verb that needs a running container.
func NotRunning(name string) error {
	return fmt.Errorf("container %s is not running: %w", name, errdefs.ErrConflict)
}
