package podman

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// Logs copies the container's output to o.Stdout/o.Stderr. Podman's libpod
// log stream is always multiplexed (a TTY container's output is all on
// stdout), so it is demultiplexed here.
func (b *Backend) Logs(ctx context.Context, id string, o backends.LogOptions) error {
	q := url.Values{
		"stdout": {"true"}, "stderr": {"true"},
		"follow": {strconv.FormatBool(o.Follow)}, "timestamps": {strconv.FormatBool(o.Timestamps)},
		"tail": {"all"},
	}
	if o.Tail >= 0 {
		q.Set("tail", strconv.Itoa(o.Tail))
	}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.Format(time.RFC3339Nano))
	}
	if !o.Until.IsZero() {
		q.Set("until", o.Until.Format(time.RFC3339Nano))
	}
	resp, err := b.cli.do(ctx, request{method: "GET", path: containerPath(id, "logs"), query: q})
	if err != nil {
		return fmt.Errorf("logs of container %s: %w", id, err)
	}
	defer resp.Body.Close()
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	stdout, stderr := outputs(o.Stdout, o.Stderr)
	if err := demux(stdout, stderr, resp.Body); err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of container %s: %w", id, err)
	}
	return nil
}
