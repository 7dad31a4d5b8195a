package podman

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// defaultStopTimeout is podman's grace period when a container has none.
const defaultStopTimeout = 10 * time.Second

func containerPath(id, verb string) string {
	p := "/containers/" + url.PathEscape(id)
	if verb != "" {
		p += "/" + verb
	}
	return p
}

// Start starts a created or stopped container (a running one is left as
// it is) and, where podman cannot schedule healthchecks (no systemd), the
// container's healthcheck driver (health.go).
func (b *Backend) Start(ctx context.Context, id string) error {
	if err := b.threadEnding(ctx, request{method: "POST", path: containerPath(id, "start")}); err != nil {
		return fmt.Errorf("start container %s: %w", id, err)
	}
	if err := b.driveHealth(ctx, id); err != nil {
		return fmt.Errorf("start container %s: %w", id, err)
	}
	return nil
}

// Stop sends the stop signal, waits up to the grace period, then kills.
// Podman's stop always sends the container's own signal, so another
// signal is sent with kill, followed by a stop with the rest of the grace
// period (stop, not kill, so that podman records a user stop and the
// restart policy leaves the container stopped).
// The container's healthcheck driver ends with it.
func (b *Backend) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	drv := b.driverOf(ctx, id)
	err := b.stop(ctx, id, o)
	if err == nil {
		err = drv.end()
	}
	if err != nil {
		return fmt.Errorf("stop container %s: %w", id, err)
	}
	return nil
}

func (b *Backend) stop(ctx context.Context, id string, o backends.StopOptions) error {
	timeout := o.Timeout
	if o.Signal != 0 {
		d, err := b.inspect(ctx, id)
		if err != nil {
			return err
		}
		if o.Signal != stopSignalOf(d) {
			grace := defaultStopTimeout
			if o.Timeout != nil {
				grace = *o.Timeout
			} else if d.Config.StopTimeout > 0 {
				grace = time.Duration(d.Config.StopTimeout) * time.Second
			}
			start := time.Now()
			if err := b.Kill(ctx, id, o.Signal); err != nil {
				if errdefs.IsConflict(err) {
					return nil // not running
				}
				return err
			}
			wctx, cancel := context.WithTimeout(ctx, grace)
			_, _ = b.waitExit(wctx, id)
			cancel()
			if err := ctx.Err(); err != nil {
				return err
			}
			left := max(grace-time.Since(start), 0)
			timeout = &left
		}
	}
	q := url.Values{}
	if timeout != nil {
		q.Set("timeout", strconv.Itoa(seconds(*timeout)))
	}
	err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "stop"), query: q}, nil)
	if err != nil && exitFileLate(err) {
		// Libpod waits for the process to die, then up to 5 s for conmon's
		// exit file; on a loaded host the file can come later (podman's
		// "timed out waiting for file" flake family, e.g.
		// containers/podman#5339). Libpod then records the container
		// stopped with exit code -1: what the caller asked for.
		if d, ierr := b.inspect(ctx, id); ierr == nil && !d.State.Running {
			return nil
		}
	}
	return err
}

// remove is one DELETE of container id.
func (b *Backend) remove(ctx context.Context, id string, q url.Values) error {
	var reports []rmReport
	if err := b.cli.call(ctx, request{method: "DELETE", path: containerPath(id, ""), query: q}, &reports); err != nil {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	for _, r := range reports {
		if msg := reportError(r.Err); msg != "" {
			return fmt.Errorf("remove container %s: %s: %w", id, msg, classify(500, msg))
		}
	}
	return nil
}

// exitFileLate reports libpod's error for an exit file conmon did not
// write in time.
func exitFileLate(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "timed out waiting for file") && strings.Contains(msg, "exits")
}

// rootfsBusy reports libpod's failure to remove a just-stopped
// container's storage because a mount in it (its shm) is still busy.
func rootfsBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "root filesystem") && strings.Contains(msg, "device or resource busy")
}

// stopSignalOf is the container's stop signal (SIGTERM when it has none).
func stopSignalOf(d containerInspect) spec.Signal {
	return spec.SignalOr(string(d.Config.StopSignal), spec.SIGTERM)
}

// Restart stops (as Stop does) and starts the container again, with a
// fresh healthcheck driver.
func (b *Backend) Restart(ctx context.Context, id string, o backends.StopOptions) error {
	drv := b.driverOf(ctx, id)
	if o.Signal != 0 {
		if err := b.stop(ctx, id, o); err != nil {
			return fmt.Errorf("restart container %s: %w", id, err)
		}
	} else {
		q := url.Values{}
		if o.Timeout != nil {
			q.Set("t", strconv.Itoa(seconds(*o.Timeout)))
		}
		if err := b.threadEnding(ctx, request{method: "POST", path: containerPath(id, "restart"), query: q}); err != nil {
			return fmt.Errorf("restart container %s: %w", id, err)
		}
	}
	if err := drv.end(); err != nil {
		return fmt.Errorf("restart container %s: %w", id, err)
	}
	return b.Start(ctx, id)
}

// Kill sends a signal (SIGKILL when 0). A container that is not
// running is a Conflict.
func (b *Backend) Kill(ctx context.Context, id string, signal spec.Signal) error {
	err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "kill"), query: url.Values{"signal": {cmp.Or(signal, spec.SIGKILL).String()}}}, nil)
	if err != nil {
		if strings.Contains(err.Error(), "can only kill running containers") && !errdefs.IsConflict(err) {
			err = fmt.Errorf("%w: %w", err, errdefs.ErrConflict)
		}
		return fmt.Errorf("kill container %s: %w", id, err)
	}
	return nil
}

// Pause freezes a container.
func (b *Backend) Pause(ctx context.Context, id string) error {
	if err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "pause")}, nil); err != nil {
		return fmt.Errorf("pause container %s: %w", id, err)
	}
	return nil
}

// Unpause thaws a container.
func (b *Backend) Unpause(ctx context.Context, id string) error {
	if err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "unpause")}, nil); err != nil {
		return fmt.Errorf("unpause container %s: %w", id, err)
	}
	return nil
}

// Rename renames a container.
func (b *Backend) Rename(ctx context.Context, id, name string) error {
	if err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "rename"), query: url.Values{"name": {name}}}, nil); err != nil {
		return fmt.Errorf("rename container %s to %s: %w", id, name, err)
	}
	return nil
}

// rmReport is one entry of podman's remove answer.
type rmReport struct {
	ID  string   `json:"Id"`
	Err rawError `json:"Err"`
}

// rawError is a report's error as podman sent it (see reportError).
type rawError = json.RawMessage

// Remove deletes a container; Force kills a running one first, Volumes
// also removes its anonymous volumes (podman's, and those Create made for
// anonymous volumes with driver options).
func (b *Backend) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	drv := b.driverOf(ctx, id)
	var extra []string
	if o.Volumes {
		if d, err := b.inspect(ctx, id); err == nil {
			if v := d.Config.Labels[labelAnonymousVolumes]; v != "" {
				extra = strings.Split(v, ",")
			}
		}
	}
	q := url.Values{"force": {strconv.FormatBool(o.Force)}}
	if o.Force {
		q.Set("timeout", "0")
	}
	if o.Volumes {
		q.Set("v", "true")
		q.Set("volumes", "true") // podman 4.3's name for it
	}
	err := b.remove(ctx, id, q)
	for i := 0; err != nil && rootfsBusy(err) && i < 20; i++ {
		// The container's /dev/shm was still mounted a moment after it
		// stopped (conmon's cleanup runs beside the remove): again, once
		// the mount is gone (CI40: a recreate failed on it once).
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
		err = gone(b.remove(ctx, id, q))
	}
	if err != nil && o.Force && exitFileLate(err) {
		// Its forced stop met the late exit file (stop's comment): libpod
		// has recorded the container stopped, so a second remove goes on.
		if d, ierr := b.inspect(ctx, id); ierr == nil && !d.State.Running {
			err = gone(b.remove(ctx, id, q))
		}
	}
	if err != nil {
		return err
	}
	errs := []error{drv.end()}
	for _, v := range extra {
		if err := b.RemoveVolume(ctx, v, true); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	return nil
}

// gone takes a retried remove's NotFound as done: the attempt that failed
// before it removed the container after all (libpod finishes a removal
// its report called failed: CI51, a recreate's remove of a container with
// a busy shm met "no container with name or ID" on its retry).
func gone(err error) error {
	if errdefs.IsNotFound(err) {
		return nil
	}
	return err
}

// reportError reads the error of a podman report (a string, an object
// with a message, or null).
func reportError(raw rawError) string {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" || string(raw) == `""` {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
		Cause   string `json:"cause"`
	}
	if json.Unmarshal(raw, &obj) == nil && (obj.Message != "" || obj.Cause != "") {
		return cmp.Or(obj.Message, obj.Cause)
	}
	return string(raw)
}

// Wait blocks until the container is not running and returns its exit
// code; a container that is not running answers at once.
func (b *Backend) Wait(ctx context.Context, id string) (int, error) {
	code, err := b.waitExit(ctx, id)
	if err != nil {
		return -1, fmt.Errorf("wait for container %s: %w", id, err)
	}
	return code, nil
}

func (b *Backend) waitExit(ctx context.Context, id string) (int, error) {
	d, err := b.inspect(ctx, id)
	if err != nil {
		return -1, err
	}
	if !running(d) {
		return d.State.ExitCode, nil
	}
	var code int
	q := url.Values{"condition": {"stopped", "exited"}}
	if err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "wait"), query: q}, &code); err != nil {
		return -1, err
	}
	return code, nil
}

// seconds rounds a grace period up to whole seconds.
func seconds(d time.Duration) int { return max(int(math.Ceil(d.Seconds())), 0) }
