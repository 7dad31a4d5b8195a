package incus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

// setState asks Incus for a state change and waits for it.
func (b *Backend) setState(ctx context.Context, name, action string, timeout int, force bool) error {
	return b.cli.call(ctx, request{method: "PUT", path: instancePath(name) + "/state", body: statePut{Action: action, Timeout: timeout, Force: force}}, nil)
}

func running(in instance) bool {
	return in.Status == "Running" || in.Status == "Frozen" || in.Status == "Starting" || in.Status == "Stopping" || in.Status == "Freezing"
}

// Start starts the container's init, which starts the main process; it
// returns once the process runs, or with why it could not start.
func (b *Backend) Start(ctx context.Context, id string) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("start container %s: %w", id, err)
	}
	if !running(in) {
		if err := checkPorts(in); err != nil {
			return fmt.Errorf("start container %s: %w", cmpOr(in.Config[keyName], id), err)
		}
	}
	dir := in.Config[keyDir]
	if dir == "" {
		if err := b.startOCI(ctx, in); err != nil {
			return err
		}
		b.event("start", in)
		return nil
	}
	if running(in) {
		r := recordOf(in)
		if !r.Final() && monitor.AliveIn(dir, r) {
			return nil // running already
		}
		// The init is finishing a run that ended: let it, and stop it by
		// force if it lingers (a loaded host): the run is over, only its
		// init is left.
		if err := b.waitStopped(ctx, in.Name, 10*time.Second); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("start container %s: %w", id, err)
			}
			if err := b.forceStop(ctx, in.Name); err != nil {
				return fmt.Errorf("start container %s: %w", id, err)
			}
			if err := b.waitStopped(ctx, in.Name, 30*time.Second); err != nil {
				return fmt.Errorf("start container %s: %w", id, err)
			}
		}
	}
	began := time.Now()
	err = b.setState(ctx, in.Name, "start", 0, false)
	for try := 0; err != nil && idmapRace(err) && try < 10; try++ {
		// Another container sharing a volume is starting: incusd shifts
		// the volume for the first one, then agrees.
		_ = b.waitStopped(ctx, in.Name, 5*time.Second)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		err = b.setState(ctx, in.Name, "start", 0, false)
	}
	if err != nil {
		// Let a failed start settle, so the container can be removed.
		_ = b.waitStopped(ctx, in.Name, 5*time.Second)
		return fmt.Errorf("start container %s: incus: %w (see `incus info --show-log %s`)%s", cmpOr(in.Config[keyName], id), err, in.Name, b.lxcLogTail(ctx, in.Name))
	}
	return b.awaitRun(ctx, in, began)
}

// idmapRace reports incusd 6.0 refusing to mount a custom volume while
// another container that shares it is being started (its idmap is not
// recorded on the volume yet).
func idmapRace(err error) bool {
	return strings.Contains(err.Error(), "Idmaps of container") && strings.Contains(err.Error(), "are not identical")
}

// awaitRun waits for the init of a run started at began to report the
// main process running, or failing to.
func (b *Backend) awaitRun(ctx context.Context, in instance, began time.Time) error {
	name := cmpOr(in.Config[keyName], in.Name)
	deadline := time.Now().Add(time.Minute)
	for i := 0; ; i++ {
		r, err := monitor.ReadRecord(in.Config[keyDir])
		if err != nil {
			return fmt.Errorf("start container %s: %w", name, err)
		}
		fresh := !r.Monitor.StartedAt.Before(began.Add(-time.Second)) || !r.State.FinishedAt.Before(began)
		switch {
		case fresh && (r.State.Status == monitor.StatusRunning || r.State.Status == monitor.StatusRestarting):
			return nil
		case !r.State.FinishedAt.Before(began) && r.Final():
			if r.State.Error != "" {
				return fmt.Errorf("start container %s: %s: %w", name, r.State.Error, errdefs.ErrFailedPrecondition)
			}
			return nil // it ran and ended already
		}
		if i%20 == 19 {
			cur, err := b.getInstance(ctx, in.Name)
			if err == nil && !running(cur) {
				r, _ = monitor.ReadRecord(in.Config[keyDir])
				if r.State.Error != "" && !r.State.FinishedAt.Before(began) {
					return fmt.Errorf("start container %s: %s: %w", name, r.State.Error, errdefs.ErrFailedPrecondition)
				}
				return fmt.Errorf("start container %s: its init stopped before starting the main process (see `incus info --show-log %s`): %w", name, in.Name, errdefs.ErrUnknown)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("start container %s: the main process did not start within a minute: %w", name, context.DeadlineExceeded)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Stop stops the main process through its monitor (the stop signal, then
// SIGKILL at the grace period) and waits for the instance to stop.
func (b *Backend) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("stop container %s: %w", id, err)
	}
	if !running(in) {
		return nil
	}
	dir := in.Config[keyDir]
	if dir == "" {
		return b.stopOCI(ctx, in, o)
	}
	if in.Status == "Frozen" {
		_ = b.setState(ctx, in.Name, "unfreeze", 0, false)
	}
	defer b.event("stop", in)
	so := monitor.StopOptions{Timeout: o.Timeout, Signal: syscall.Signal(o.Signal)}
	r, err := monitor.Stop(ctx, dir, so)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || !r.Final() {
		// No monitor answers (gone, or not up yet): stop the instance.
		return b.forceStop(ctx, in.Name)
	}
	if err := b.waitStopped(ctx, in.Name, 10*time.Second); err != nil {
		return b.forceStop(ctx, in.Name)
	}
	return nil
}

func (b *Backend) forceStop(ctx context.Context, name string) error {
	if err := b.setState(ctx, name, "stop", 0, true); err != nil && !errdefs.IsConflict(err) {
		return fmt.Errorf("stop container %s: incus: %w", name, err)
	}
	return nil
}

// waitStopped waits for an instance's init to exit.
func (b *Backend) waitStopped(ctx context.Context, name string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		in, err := b.getInstance(ctx, name)
		if err != nil || !running(in) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container %s: its init still runs after %v: %w", name, limit, context.DeadlineExceeded)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Restart stops, then starts the container.
func (b *Backend) Restart(ctx context.Context, id string, o backends.StopOptions) error {
	if err := b.Stop(ctx, id, o); err != nil {
		return err
	}
	return b.Start(ctx, id)
}

// Kill sends a signal to the main process through its monitor.
func (b *Backend) Kill(ctx context.Context, id string, signal spec.Signal) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("kill container %s: %w", id, err)
	}
	n := cmp.Or(signal, spec.SIGKILL)
	if !running(in) {
		return fmt.Errorf("kill container %s: container is not running: %w", id, errdefs.ErrConflict)
	}
	b.event("kill", in)
	dir := in.Config[keyDir]
	if dir == "" {
		return b.killOCI(ctx, in, n)
	}
	if _, err := monitor.Kill(ctx, dir, syscall.Signal(n)); err != nil {
		if errors.Is(err, monitor.ErrNoMonitor) && n == spec.SIGKILL {
			return b.forceStop(ctx, in.Name)
		}
		return fmt.Errorf("kill container %s: %w", id, err)
	}
	return nil
}

// Pause freezes the container.
func (b *Backend) Pause(ctx context.Context, id string) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("pause container %s: %w", id, err)
	}
	if in.Status != "Running" {
		return fmt.Errorf("pause container %s: container is %s: %w", id, strings.ToLower(in.Status), errdefs.ErrConflict)
	}
	if err := b.setState(ctx, in.Name, "freeze", 0, false); err != nil {
		return fmt.Errorf("pause container %s: %w", id, err)
	}
	b.event("pause", in)
	return nil
}

// Unpause thaws the container.
func (b *Backend) Unpause(ctx context.Context, id string) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("unpause container %s: %w", id, err)
	}
	if in.Status != "Frozen" {
		return fmt.Errorf("unpause container %s: container is not paused: %w", id, errdefs.ErrConflict)
	}
	if err := b.setState(ctx, in.Name, "unfreeze", 0, false); err != nil {
		return fmt.Errorf("unpause container %s: %w", id, err)
	}
	b.event("unpause", in)
	return nil
}

// Remove deletes the instance, its record directory and (Volumes) the
// anonymous volumes made for it, then updates its peers' /etc/hosts.
func (b *Backend) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	name := cmpOr(in.Config[keyName], id)
	if running(in) {
		if st, _ := stateOf(in, recordOf(in)); st == backends.StateExited || st == backends.StateDead {
			// The main process is gone for good; its init is finishing.
			if b.waitStopped(ctx, in.Name, 10*time.Second) != nil {
				_ = b.forceStop(ctx, in.Name)
			}
		} else if !o.Force {
			return fmt.Errorf("remove container %s: container is running: stop it first or force the removal: %w", name, errdefs.ErrConflict)
		} else if err := b.forceStop(ctx, in.Name); err != nil {
			return err
		}
	}
	err = b.cli.call(ctx, request{method: "DELETE", path: instancePath(in.Name)}, nil)
	if errdefs.IsConflict(err) { // a start that failed a moment ago may still be settling
		_ = b.forceStop(ctx, in.Name)
		_ = b.waitStopped(ctx, in.Name, 5*time.Second)
		err = b.cli.call(ctx, request{method: "DELETE", path: instancePath(in.Name)}, nil)
	}
	if err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove container %s: incus: %w", name, err)
	}
	var errs []error
	b.importEvents(in)
	b.event("destroy", in)
	_ = os.Remove(filepath.Join(b.cfg.dataDir, "console", in.Name+".log")) // an OCI container's console copy
	if o.Volumes {
		for _, v := range strings.Split(in.Config[keyAnonymous], ",") {
			if v == "" {
				continue
			}
			if err := b.RemoveVolume(ctx, v, true); err != nil && !errdefs.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	if dir := in.Config[keyDir]; dir != "" && strings.HasPrefix(dir, b.cfg.recordsDir()+"/") {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: record directory: %w", name, err))
		}
	} else if dir != "" {
		_ = os.RemoveAll(dir) // made by a cornus with another data directory
	}
	if h, ok := infoOf(in); ok && len(h.nics) > 0 {
		if err := b.syncHosts(ctx, h.nics); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Wait blocks until the main process has exited for good and returns its
// exit code.
func (b *Backend) Wait(ctx context.Context, id string) (int, error) {
	in, err := b.find(ctx, id)
	if err != nil {
		return -1, fmt.Errorf("wait for container %s: %w", id, err)
	}
	if in.Config[keyDir] == "" {
		return b.waitOCI(ctx, in)
	}
	for i := 0; ; i++ {
		r := recordOf(in)
		if r.Final() {
			return r.State.ExitCode, nil
		}
		if i%10 == 0 {
			cur, err := b.getInstance(ctx, in.Name)
			if errdefs.IsNotFound(err) {
				return -1, fmt.Errorf("wait for container %s: it was removed: %w", id, errdefs.ErrNotFound)
			}
			if err == nil && !running(cur) {
				r = recordOf(cur)
				if st, code := stateOf(cur, r); st != backends.StateCreated {
					return code, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Rename renames a container: its cornus name (the Incus instance keeps
// its name, so the record directory and mounts stay valid).
func (b *Backend) Rename(ctx context.Context, id, name string) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("rename container %s: %w", id, err)
	}
	if other, err := b.find(ctx, name); err == nil && other.Name != in.Name {
		return fmt.Errorf("rename container %s: the name %s is in use: %w", id, name, errdefs.ErrConflict)
	}
	patch := map[string]any{"config": map[string]string{keyName: name}}
	if err := b.cli.call(ctx, request{method: "PATCH", path: instancePath(in.Name), body: patch}, nil); err != nil {
		return fmt.Errorf("rename container %s: %w", id, err)
	}
	in.Config[keyName] = name
	b.event("rename", in)
	return nil
}

// lxcLogTail is the end of an instance's LXC log, for a failed start's
// error: the container is removed after it, and with it the log that says
// why ("" when there is none).
func (b *Backend) lxcLogTail(ctx context.Context, name string) string {
	resp, err := b.cli.raw(ctx, request{method: "GET", path: instancePath(name) + "/logs/lxc.log"})
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return "; its LXC log ends:\n" + strings.Join(lines[max(0, len(lines)-8):], "\n")
}
