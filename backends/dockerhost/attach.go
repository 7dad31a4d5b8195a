package dockerhost

import (
	"context"
	"io"

	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/termsize"
)

// Attach streams a container's stdio until its output ends (the container
// stops) or ctx is done. As with docker attach, the end of o.Stdin ends
// the attachment (the daemon closes the output streams then).
func (b *Backend) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	res, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return wrap(err, "attach to container %s", id)
	}
	tty := res.Container.Config != nil && res.Container.Config.Tty
	att, err := b.cli.ContainerAttach(ctx, id, client.ContainerAttachOptions{
		Stream: o.Stream, Logs: o.Logs,
		Stdin: o.Stdin != nil, Stdout: o.Stdout != nil, Stderr: o.Stderr != nil || (tty && o.Stdout != nil),
	})
	if err != nil {
		return wrap(err, "attach to container %s", id)
	}
	defer att.Close()
	if o.Attached != nil {
		o.Attached()
	}
	stopClose := context.AfterFunc(ctx, att.Close)
	defer stopClose()

	if tty {
		defer termsize.Track(ctx, func(s backends.TermSize) error {
			_, err := b.cli.ContainerResize(ctx, id, client.ContainerResizeOptions{Height: s.Height, Width: s.Width})
			return err
		}, nil, o.Resize)()
	}
	if o.Stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, o.Stdin)
			_ = att.CloseWrite()
		}()
	}
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	if err := copyOutput(stdout, stderr, att.Reader, tty); err != nil && ctx.Err() == nil {
		return wrap(err, "attach to container %s", id)
	}
	return nil
}
