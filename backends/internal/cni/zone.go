package cni

import (
	"net/netip"
	"strings"
)

// zone indexes the store for the resolver: names per network, and the
// networks of each container address (to scope a query to its asker).
type zone struct {
	names  map[string]map[string][]netip.Addr // network → lower-case name → IPs
	netsOf map[netip.Addr][]string            // container IP → its networks, in order
}

// buildZone indexes cf. It does no I/O.
func buildZone(cf containersFile) zone {
	z := zone{names: map[string]map[string][]netip.Addr{}, netsOf: map[netip.Addr][]string{}}
	for _, c := range cf.Containers {
		var nets []string
		for _, a := range c.Attachments {
			if !a.Pending {
				nets = append(nets, a.Network)
			}
		}
		for _, a := range c.Attachments {
			if !a.Pending && a.IP.IsValid() {
				z.netsOf[a.IP] = nets
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range cf.Containers {
		for _, a := range c.Attachments {
			if seen[a.Network] {
				continue
			}
			seen[a.Network] = true
			m := map[string][]netip.Addr{}
			for _, p := range peersOn(cf, a.Network) {
				for _, n := range p.names {
					k := nameKey(n)
					m[k] = append(m[k], p.ip)
				}
			}
			z.names[a.Network] = m
		}
	}
	return z
}

// lookup resolves name for a query from src arriving on network: searched
// in the asker's networks in attachment order (the one it came in on when
// the asker is unknown); the first network that has the name wins, as in
// Docker's embedded DNS. nil means "not ours".
func (z zone) lookup(network string, src netip.Addr, name string) []netip.Addr {
	nets := z.netsOf[src.Unmap()]
	if len(nets) == 0 {
		nets = []string{network}
	}
	name = strings.ToLower(name)
	for _, n := range nets {
		if ips := z.names[n][name]; len(ips) > 0 {
			return ips
		}
	}
	return nil
}
