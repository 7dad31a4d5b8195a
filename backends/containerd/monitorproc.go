package containerd

import (
	"context"

	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// RunMonitor is the body of `cornus monitor containerd ID`: it supervises
// the container (monitor.Run) and, meanwhile, serves DNS for the
// container's networks on their gateways — whichever monitor of a network
// binds first serves it; the others retry, so one takes over when it goes.
func RunMonitor(ctx context.Context, environ []string, id string) error {
	b, err := New(ctx, WithEnviron(environ), func(o *options) { o.monitor = true })
	if err != nil {
		return err
	}
	defer b.Close()
	task, err := b.MonitorTask(ctx, id)
	if err != nil {
		return err
	}
	if st, err := b.store().Read(id); err == nil {
		dnsCtx, stop := context.WithCancel(ctx)
		defer stop()
		for name := range st.Networks {
			go b.net.ServeDNS(dnsCtx, name)
		}
	}
	return monitor.Run(ctx, monitor.RunOptions{Store: b.records, ID: id, Task: task})
}
