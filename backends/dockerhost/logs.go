package dockerhost

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Logs copies the container's output to o.Stdout/o.Stderr; a container
// without a TTY has its two streams demultiplexed.
func (b *Backend) Logs(ctx context.Context, id string, o backends.LogOptions) error {
	res, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return wrap(err, "logs of container %s", id)
	}
	tty := res.Container.Config != nil && res.Container.Config.Tty
	opts := client.ContainerLogsOptions{
		ShowStdout: true, ShowStderr: true,
		Follow: o.Follow, Timestamps: o.Timestamps,
		Since: unixTime(o.Since), Until: unixTime(o.Until),
		Tail: "all",
	}
	if o.Tail >= 0 {
		opts.Tail = strconv.Itoa(o.Tail)
	}
	rc, err := b.cli.ContainerLogs(ctx, id, opts)
	if err != nil {
		return wrap(err, "logs of container %s", id)
	}
	defer rc.Close()
	stdout, stderr := outputs(o.Stdout, o.Stderr)
	if err := copyOutput(stdout, stderr, rc, tty); err != nil && ctx.Err() == nil {
		return wrap(err, "logs of container %s", id)
	}
	return nil
}

// outputs fills in missing writers: no stdout discards, no stderr merges
// into stdout.
func outputs(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = stdout
	}
	return stdout, stderr
}

// copyOutput copies a raw (TTY) or multiplexed stream.
func copyOutput(stdout, stderr io.Writer, r io.Reader, tty bool) error {
	var err error
	if tty {
		_, err = io.Copy(stdout, r)
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, r)
	}
	return err
}

// unixTime is Docker's "seconds.nanoseconds" form, "" for the zero time.
func unixTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond())
}
