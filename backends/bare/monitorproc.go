package bare

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends/internal/cni"
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
	if st, err := b.readStored(id); err == nil && b.cfg.dns {
		dnsCtx, stop := context.WithCancel(ctx)
		defer stop()
		for name := range st.Networks {
			go b.serveDNS(dnsCtx, name)
		}
	}
	return monitor.Run(ctx, monitor.RunOptions{Store: b.records, ID: id, Task: task})
}

// dnsRetry is how often a monitor tries to take over a network's resolver.
const dnsRetry = 2 * time.Second

func (b *Backend) serveDNS(ctx context.Context, network string) {
	for ctx.Err() == nil {
		r, err := b.net.NewResolver(ctx, cni.ResolverOptions{Network: network, Upstreams: hostNameservers()})
		if err == nil {
			if err = r.Start(ctx); err == nil {
				<-ctx.Done()
				_ = r.Close()
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(dnsRetry):
		}
	}
}

// hostNameservers are the host's resolvers, where names that are not the
// project's go (the monitor runs in the host's network namespace, so a
// loopback resolver such as systemd-resolved's is reachable).
func hostNameservers() []string {
	f, err := os.Open("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, f[1])
		}
	}
	return out
}
