package records

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// Attach streams a container's output and feeds its stdin through the
// container's monitor, which owns its stdio. A container that is created
// but not started yet is waited for (docker run attaches first, then
// starts): Attached is called at once; output-only attachments follow
// the log from its start, and one with stdin replays what the process
// wrote before the monitor took the attachment, then streams. logs is
// the backend's Logs.
func (s *Store) Attach(ctx context.Context, id string, o backends.AttachOptions, logs func(context.Context, string, backends.LogOptions) error) error {
	st, err := s.Find(ctx, id)
	if err != nil {
		return err
	}
	dir, err := s.Records.Dir(st.ID)
	if err != nil {
		return err
	}
	attached := o.Attached
	replay := o.Logs
	lo := backends.LogOptions{Tail: -1, Stdout: o.Stdout, Stderr: cmp.Or[io.Writer](o.Stderr, o.Stdout)}
	if r := s.RecordOf(st.ID); r.State.Status == monitor.StatusCreated && r.Monitor.Pid == 0 {
		if attached != nil {
			attached()
			attached = nil
		}
		if err := s.awaitMonitor(ctx, st.ID); err != nil {
			return err
		}
		if o.Resize != nil {
			go ForwardResize(ctx, dir, o.Resize)
			o.Resize = nil
		}
		if o.Stream {
			// Following the log from its start misses nothing, however
			// soon the process writes or exits; the monitor's attachment
			// only feeds stdin (its output would start only once it took
			// the attachment: docker compose run's echo came and went
			// between a replay of the log and the attachment).
			lo.Follow = true
			if o.Stdin != nil {
				go func() {
					_ = monitor.Attach(ctx, dir, monitor.AttachStreams{Stdin: o.Stdin, Stdout: io.Discard, Stderr: io.Discard})
				}()
			}
			return logs(ctx, st.ID, lo)
		}
		replay = true // what it wrote before the attachment took
	}
	if o.Resize != nil {
		go ForwardResize(ctx, dir, o.Resize)
	}
	if replay {
		if err := logs(ctx, st.ID, lo); err != nil {
			return err
		}
	}
	if !o.Stream {
		return nil
	}
	return monitor.Attach(ctx, dir, monitor.AttachStreams{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Attached: attached})
}

// awaitMonitor waits until the container's monitor runs (it was started)
// or the container will never run.
func (s *Store) awaitMonitor(ctx context.Context, id string) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		r := s.RecordOf(id)
		switch {
		case r.Final():
			return nil
		case r.Monitor.Pid != 0 && r.State.Status != monitor.StatusCreated:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("attach %s: waiting for it to start: %w", id, ctx.Err())
		case <-t.C:
		}
	}
}

// ForwardResize sizes the terminal of the container whose monitor runs in
// dir as sizes say, until ctx ends, sizes closes or the monitor is gone (a
// conflict, no terminal yet, is skipped).
func ForwardResize(ctx context.Context, dir string, sizes <-chan backends.TermSize) {
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-sizes:
			if !ok {
				return
			}
			if err := monitor.Resize(ctx, dir, uint32(s.Width), uint32(s.Height)); err != nil && !errdefs.IsConflict(err) {
				return
			}
		}
	}
}
