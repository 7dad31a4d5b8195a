package daemonless

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// Logs copies the container's output from the monitor's log.
func (c *Core) Logs(ctx context.Context, id string, o backends.LogOptions) error {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return err
	}
	dir, _ := c.Records.Dir(st.ID)
	return monitor.Logs(ctx, dir, monitor.LogOptions{Follow: o.Follow, Tail: o.Tail, Since: o.Since, Until: o.Until,
		Timestamps: o.Timestamps, Stdout: o.Stdout, Stderr: o.Stderr})
}
