package dockerhost

import (
	"context"
	"io"
	"time"

	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/termsize"
)

// Exec runs a process in a running container, streams its stdio and
// returns its exit code.
func (b *Backend) Exec(ctx context.Context, id string, o backends.ExecOptions) (int, error) {
	created, err := b.cli.ExecCreate(ctx, id, client.ExecCreateOptions{
		User: o.User, Privileged: o.Privileged, TTY: o.TTY,
		AttachStdin: o.Stdin != nil, AttachStdout: true, AttachStderr: true,
		Env: o.Env, WorkingDir: o.WorkingDir, Cmd: o.Cmd,
	})
	if err != nil {
		return -1, wrap(err, "exec in container %s", id)
	}
	execID := created.ID
	att, err := b.cli.ExecAttach(ctx, execID, client.ExecAttachOptions{TTY: o.TTY})
	if err != nil {
		return -1, wrap(err, "exec in container %s: start", id)
	}
	defer att.Close()
	stopClose := context.AfterFunc(ctx, att.Close)
	defer stopClose()

	if o.Started != nil {
		o.Started(execID)
	}
	// API 1.41 ignores the console size at create and start: resize once
	// running, then follow the resize channel.
	resize := func(s backends.TermSize) error {
		_, err := b.cli.ExecResize(ctx, execID, client.ExecResizeOptions{Height: s.Height, Width: s.Width})
		return err
	}
	if o.TTY {
		defer termsize.Track(ctx, resize, o.Size, o.Resize)()
	}
	if o.Stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, o.Stdin)
			_ = att.CloseWrite()
		}()
	}
	stdout, stderr := outputs(o.Stdout, o.Stderr)
	if err := copyOutput(stdout, stderr, att.Reader, o.TTY); err != nil && ctx.Err() == nil {
		return -1, wrap(err, "exec in container %s: output", id)
	}
	if err := ctx.Err(); err != nil {
		return -1, wrap(err, "exec in container %s", id)
	}
	return b.execExitCode(ctx, execID)
}

// execExitCode waits for the daemon to record the exit once output ended.
func (b *Backend) execExitCode(ctx context.Context, execID string) (int, error) {
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		res, err := b.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil {
			return -1, wrap(err, "inspect exec %s", execID)
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, wrap(ctx.Err(), "inspect exec %s", execID)
		case <-time.After(delay):
		}
	}
}
