package containerd

import (
	"bufio"
	"context"
	"os"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// RunMonitor is the body of `cornus monitor containerd ID`: it supervises
// the container (monitor.Run) and, meanwhile, serves DNS for the
// container's networks on their gateways — whichever monitor of a network
// binds first serves it; the others retry, so one takes over when it goes.
func RunMonitor(ctx context.Context, environ []string, id string) error {
	b, err := New(ctx, WithEnviron(environ))
	if err != nil {
		return err
	}
	defer b.Close()
	task, err := b.MonitorTask(ctx, id)
	if err != nil {
		return err
	}
	if st, err := b.readStored(id); err == nil {
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
