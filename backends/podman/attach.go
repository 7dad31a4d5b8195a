package podman

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/termsize"
)

// stdinEndGrace is how long output may still arrive after the attached
// stdin ended, before the attachment ends (podman keeps the stream open;
// Docker ends it when stdin ends, unless StdinOnce).
const stdinEndGrace = 200 * time.Millisecond

// labelStdinOnce marks a container created with StdinOnce (docker run
// -i, compose run), which podman has no field for.
const labelStdinOnce = "cornus.podman.stdin-once"

// Attach streams a container's stdio until its output ends (the container
// stops) or ctx is done. As with docker attach, the end of o.Stdin ends
// the attachment, unless the container is StdinOnce: then, as Docker
// closes only the container's stdin, the output streams on to the end
// (a compose run's stdin is often empty, and its output comes after).
func (b *Backend) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	d, err := b.inspect(ctx, id)
	if err != nil {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	tty := d.Config.Tty
	q := url.Values{
		"stream": {strconv.FormatBool(o.Stream)}, "logs": {strconv.FormatBool(o.Logs)},
		"stdin": {strconv.FormatBool(o.Stdin != nil)}, "stdout": {strconv.FormatBool(o.Stdout != nil)},
		"stderr": {strconv.FormatBool(o.Stderr != nil || (tty && o.Stdout != nil))},
	}
	att, err := b.cli.hijack(ctx, request{method: "POST", path: containerPath(id, "attach"), query: q})
	if err != nil {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	defer att.Close()
	if o.Attached != nil {
		o.Attached()
	}
	stopClose := context.AfterFunc(ctx, func() { att.Close() })
	defer stopClose()

	done := make(chan struct{})
	defer close(done)
	if o.Resize != nil && tty {
		go termsize.Follow(done, o.Resize, func(s backends.TermSize) error {
			rq := url.Values{"h": {strconv.FormatUint(uint64(s.Height), 10)}, "w": {strconv.FormatUint(uint64(s.Width), 10)}}
			err := b.cli.call(ctx, request{method: "POST", path: containerPath(id, "resize"), query: rq}, nil)
			return err
		})
	}
	var ended atomic.Bool // the attachment ended with stdin
	stdinOnce := d.Config.Labels[labelStdinOnce] == "true"
	if o.Stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, o.Stdin)
			_ = att.CloseWrite()
			if stdinOnce {
				return
			}
			select {
			case <-done:
			case <-time.After(stdinEndGrace):
				ended.Store(true)
				att.Close()
			}
		}()
	}
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	if err := copyOutput(stdout, stderr, att.Reader, tty); err != nil && ctx.Err() == nil && !ended.Load() {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	return nil
}
