package bare

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// RunMonitor is the body of `cornus monitor bare ID`: it supervises the
// container (monitor.Run) as the parent of its runtime and, through the
// child-subreaper bit, of its init; meanwhile it serves DNS for the
// container's networks on their gateways (unless CORNUS_BARE_DNS=false) —
// whichever monitor of a network binds first serves it; the others retry,
// so one takes over when it goes.
func RunMonitor(ctx context.Context, environ []string, id string) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("monitor: become a child subreaper: %w", err)
	}
	b, err := New(ctx, WithEnviron(environ), func(o *options) { o.monitor = true })
	if err != nil {
		return err
	}
	defer b.Close()
	task, err := b.MonitorTask(ctx, id)
	if err != nil {
		return err
	}
	reapCtx, stopReaping := context.WithCancel(ctx)
	defer stopReaping()
	mt := task.(*monitorTask)
	go reapOrphans(reapCtx, &mt.starting, mt.initPid)
	if st, err := b.store().Read(id); err == nil && b.cfg.dns {
		dnsCtx, stop := context.WithCancel(ctx)
		defer stop()
		for name := range st.Networks {
			go b.net.ServeDNS(dnsCtx, name)
		}
	}
	return monitor.Run(ctx, monitor.RunOptions{Store: b.records, ID: id, Task: task})
}
