package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Start starts a created or stopped container.
func (b *Backend) Start(ctx context.Context, id string) error {
	_, err := b.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	if err != nil && staleTask.MatchString(err.Error()) {
		return fmt.Errorf("start container %s: %w: %w", id, backends.ErrStaleTask, err)
	}
	return wrap(err, "start container %s", id)
}

// staleTask matches dockerd's answers (500s, unclassed) when containerd
// still holds a task for the container: killed between creating and
// starting the task, dockerd forgets it but containerd does not, and every
// later start fails with "task ID: already exists" — or, when the shim's
// bundle directory survived, "failed to start shim: mkdir …/ID: file
// exists".
var staleTask = regexp.MustCompile(`\btask [0-9a-f]{12,64}: already exists|failed to start shim: mkdir \S*/io\.containerd\.runtime\.v2\.task/\S+: file exists`)

// defaultStopTimeout is Docker's grace period when a container has none.
const defaultStopTimeout = 10 * time.Second

// Stop sends the stop signal, waits up to the grace period, then kills.
// Before API 1.42 the daemon ignores a signal on stop, so a signal other
// than the container's own is sent with kill and followed by a stop with
// the remaining grace period.
func (b *Backend) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	return wrap(b.stop(ctx, id, o), "stop container %s", id)
}

func (b *Backend) stop(ctx context.Context, id string, o backends.StopOptions) error {
	fallback, grace, err := b.needsSignalFallback(ctx, id, o)
	if err != nil {
		return err
	}
	if !fallback {
		_, err := b.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Signal: b.stopSignalParam(o.Signal), Timeout: seconds(o.Timeout)})
		return err
	}
	if _, err := b.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: o.Signal.String()}); err != nil {
		if isNotRunning(err) {
			return nil
		}
		return err
	}
	start := time.Now()
	waitCtx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	w := b.cli.ContainerWait(waitCtx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case <-w.Result:
	case <-w.Error: //nolint:errcheck // the grace ran out (or ctx ended, checked next): Stop follows
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Stop (not kill) so the daemon records a user stop for restart
	// policies; whatever grace is left applies.
	left := max(grace-time.Since(start), 0)
	_, err = b.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: seconds(&left)})
	return err
}

// needsSignalFallback reports whether o.Signal must be sent by kill (the
// daemon ignores signal= before API 1.42), and the grace period to use.
func (b *Backend) needsSignalFallback(ctx context.Context, id string, o backends.StopOptions) (bool, time.Duration, error) {
	if o.Signal == 0 || b.atLeast(apiStopSignal) {
		return false, 0, nil
	}
	res, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return false, 0, err
	}
	cfg := res.Container.Config
	own := spec.SIGTERM
	if cfg != nil {
		own = spec.SignalOr(cfg.StopSignal, own)
	}
	if own == o.Signal {
		return false, 0, nil
	}
	grace := defaultStopTimeout
	if o.Timeout != nil {
		grace = *o.Timeout
	} else if cfg != nil && cfg.StopTimeout != nil {
		grace = time.Duration(*cfg.StopTimeout) * time.Second
	}
	return true, grace, nil
}

func (b *Backend) stopSignalParam(sig spec.Signal) string {
	if b.atLeast(apiStopSignal) {
		return sig.String()
	}
	return ""
}

// Restart stops (as Stop does) and starts the container again.
func (b *Backend) Restart(ctx context.Context, id string, o backends.StopOptions) error {
	fallback, _, err := b.needsSignalFallback(ctx, id, o)
	if err != nil {
		return wrap(err, "restart container %s", id)
	}
	if fallback {
		if err := b.stop(ctx, id, o); err != nil {
			return wrap(err, "restart container %s", id)
		}
		return b.Start(ctx, id)
	}
	_, err = b.cli.ContainerRestart(ctx, id, client.ContainerRestartOptions{Signal: b.stopSignalParam(o.Signal), Timeout: seconds(o.Timeout)})
	return wrap(err, "restart container %s", id)
}

// Kill sends a signal (SIGKILL when 0).
func (b *Backend) Kill(ctx context.Context, id string, signal spec.Signal) error {
	_, err := b.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: signal.String()})
	return wrap(err, "kill container %s", id)
}

// seconds rounds a grace period up to whole seconds; nil stays nil (the
// container's own StopTimeout).
func seconds(d *time.Duration) *int {
	if d == nil {
		return nil
	}
	s := max(int(math.Ceil(d.Seconds())), 0)
	return &s
}

// isNotRunning matches the daemon's 409 for signalling a stopped container.
func isNotRunning(err error) bool {
	return errdefs.IsConflict(err)
}

// Pause freezes every process of the container.
func (b *Backend) Pause(ctx context.Context, id string) error {
	_, err := b.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
	return wrap(err, "pause container %s", id)
}

// Unpause thaws a paused container.
func (b *Backend) Unpause(ctx context.Context, id string) error {
	_, err := b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	return wrap(err, "unpause container %s", id)
}

// Rename renames a container.
func (b *Backend) Rename(ctx context.Context, id, name string) error {
	if _, err := b.cli.ContainerRename(ctx, id, client.ContainerRenameOptions{NewName: name}); err != nil {
		return wrap(err, "rename container %s to %s", id, name)
	}
	return nil
}

// Remove deletes a container; Force kills it first, Volumes removes its
// anonymous volumes.
func (b *Backend) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	var labels map[string]string
	if o.Volumes {
		res, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err != nil {
			return wrap(err, "remove container %s", id)
		}
		if res.Container.Config != nil {
			labels = res.Container.Config.Labels
		}
	}
	if _, err := b.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: o.Force, RemoveVolumes: o.Volumes}); err != nil {
		return wrap(err, "remove container %s", id)
	}
	return b.removeInherited(ctx, labels)
}

// Wait blocks until the container is not running and returns its exit
// code.
func (b *Backend) Wait(ctx context.Context, id string) (int, error) {
	w := b.cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case res := <-w.Result:
		if res.Error != nil && res.Error.Message != "" {
			return int(res.StatusCode), wrap(errors.New(res.Error.Message), "wait for container %s", id)
		}
		return int(res.StatusCode), nil
	case err := <-w.Error:
		return 0, wrap(err, "wait for container %s", id)
	}
}
