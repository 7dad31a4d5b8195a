package cni

import (
	"bufio"
	"context"
	"os"
	"strings"
	"time"
)

// dnsRetry is how often a monitor tries to take over a network's resolver.
const dnsRetry = 2 * time.Second

// ServeDNS serves DNS for network on its gateway until ctx ends, as a
// container's monitor does for the container's networks: whichever
// monitor of a network binds first serves it; the others retry, so one
// takes over when it goes. Names that are not the project's go to the
// host's resolvers.
func (m *Manager) ServeDNS(ctx context.Context, network string) {
	for ctx.Err() == nil {
		r, err := m.NewResolver(ctx, ResolverOptions{Network: network, Upstreams: hostNameservers()})
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
