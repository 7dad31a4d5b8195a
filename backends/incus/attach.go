package incus

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// Attach streams the main process's output and feeds its stdin through
// the monitor in the container, which owns its stdio. A container created
// but not started yet is waited for (docker run attaches first, then
// starts): output-only attachments follow the log from its start, one
// with stdin replays what the process wrote before the attachment took.
func (b *Backend) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	dir := in.Config[keyDir]
	if dir == "" {
		return fmt.Errorf("attach to container %s: Incus runs this OCI container's process itself; use exec: %w", id, errdefs.ErrNotImplemented)
	}
	attached := o.Attached
	replay := o.Logs
	lo := backends.LogOptions{Tail: -1, Stdout: o.Stdout, Stderr: cmp.Or[io.Writer](o.Stderr, o.Stdout)}
	if r := recordOf(in); r.State.Status == monitor.StatusCreated && r.Monitor.Pid == 0 {
		if attached != nil {
			attached()
			attached = nil
		}
		if err := awaitMonitor(ctx, dir); err != nil {
			return fmt.Errorf("attach to container %s: %w", id, err)
		}
		if o.Stream {
			// Following the log from its start misses nothing, however
			// soon the process writes or exits; the monitor's attachment
			// only feeds stdin (a run's echo came and went between a
			// replay of the log and the attachment: CI32), as in
			// records.Store.Attach.
			if o.Resize != nil {
				go records.ForwardResize(ctx, dir, o.Resize)
			}
			lo.Follow = true
			if o.Stdin != nil {
				go func() {
					_ = monitor.Attach(ctx, dir, monitor.AttachStreams{Stdin: o.Stdin, Stdout: io.Discard, Stderr: io.Discard})
				}()
			}
			return b.Logs(ctx, id, lo)
		}
		replay = true
	}
	if o.Resize != nil {
		go records.ForwardResize(ctx, dir, o.Resize)
	}
	if replay {
		if err := b.Logs(ctx, id, lo); err != nil {
			return err
		}
	}
	if !o.Stream {
		return nil
	}
	return monitor.Attach(ctx, dir, monitor.AttachStreams{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Attached: attached})
}

// awaitMonitor waits until the container's init runs its monitor, or the
// container will never run.
func awaitMonitor(ctx context.Context, dir string) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		r, err := monitor.ReadRecord(dir)
		switch {
		case err != nil:
			return err
		case r.Final():
			return nil
		case r.Monitor.Pid != 0 && r.State.Status != monitor.StatusCreated:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for it to start: %w", ctx.Err())
		case <-t.C:
		}
	}
}
