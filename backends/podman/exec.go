package podman

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/termsize"
)

// execStart is the body of POST /libpod/exec/{id}/start.
type execStart struct {
	Detach bool `json:"Detach"`
	Tty    bool `json:"Tty"`
	Height uint `json:"h,omitempty"`
	Width  uint `json:"w,omitempty"`
}

// Exec runs a process in a running container, streams its stdio and
// returns its exit code.
func (b *Backend) Exec(ctx context.Context, id string, o backends.ExecOptions) (int, error) {
	var created struct {
		ID string `json:"Id"`
	}
	body := execCreate{
		Cmd: o.Cmd, Env: o.Env, User: o.User, WorkingDir: o.WorkingDir, Privileged: o.Privileged, Tty: o.TTY,
		AttachStdin: o.Stdin != nil, AttachStdout: true, AttachStderr: true,
	}
	if err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "exec"), body: body}, &created); err != nil {
		return -1, fmt.Errorf("exec in container %s: %w", id, err)
	}
	execID := created.ID
	start := execStart{Tty: o.TTY}
	if o.TTY && o.Size != nil {
		start.Height, start.Width = o.Size.Height, o.Size.Width
	}
	att, err := b.cli.hijack(ctx, request{method: "POST", path: "/exec/" + url.PathEscape(execID) + "/start", body: start})
	if err != nil {
		return -1, fmt.Errorf("exec in container %s: start: %w", id, err)
	}
	defer att.Close()
	stopClose := context.AfterFunc(ctx, func() { att.Close() })
	defer stopClose()
	if o.Started != nil {
		o.Started(execID)
	}
	resize := func(s backends.TermSize) error { return b.resizeExec(ctx, execID, s) }
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
		return -1, fmt.Errorf("exec in container %s: output: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return -1, fmt.Errorf("exec in container %s: %w", id, err)
	}
	return b.execExitCode(ctx, execID)
}

func (b *Backend) resizeExec(ctx context.Context, execID string, s backends.TermSize) error {
	q := url.Values{"h": {strconv.FormatUint(uint64(s.Height), 10)}, "w": {strconv.FormatUint(uint64(s.Width), 10)}}
	err := b.cli.call(ctx, request{method: "POST", path: "/exec/" + url.PathEscape(execID) + "/resize", query: q}, nil)
	return err
}

// execExitCode waits for podman to record the exit once output ended.
func (b *Backend) execExitCode(ctx context.Context, execID string) (int, error) {
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		var res execInspect
		if err := b.cli.call(ctx, request{method: "GET", path: "/exec/" + url.PathEscape(execID) + "/json"}, &res); err != nil {
			return -1, fmt.Errorf("inspect exec %s: %w", execID, err)
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("inspect exec %s: %w", execID, ctx.Err())
		case <-time.After(delay):
		}
	}
}
