package egress

import (
	"net/netip"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// ParseAddrForTest parses an IP for tests.
func ParseAddrForTest(s string) (netip.Addr, error) { return netip.ParseAddr(s) }

// Any pattern, route and destination: no panic, and a compiled policy
// always decides one of the four routes.
func FuzzPolicy(f *testing.F) {
	f.Add("*.corp.example", "client", "a.corp.example:443")
	f.Add("10.0.0.0/8:443", "deny", "10.1.1.1:443")
	f.Add("[::1]:80", "cluster", "[::1]:80")
	f.Add("a*b?c", "gateway", "axxbyc")
	f.Fuzz(func(t *testing.T, pattern, route, dest string) {
		p, err := Compile(&spec.Egress{Rules: []spec.EgressRule{{Pattern: pattern, Route: route}}}, "egress", PACOptions{})
		if err != nil {
			return
		}
		d, err := ParseDestination(dest)
		if err != nil {
			return
		}
		switch got := p.Decide(d).Route; got {
		case Client, Gateway, Cluster, Deny:
		default:
			t.Fatalf("route %q", got)
		}
	})
}
