package cni

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
)

// Locks down isolation: containers on different networks cannot reach or
// resolve each other, one on both reaches both (eth0 + eth1, one default
// route), and an internal network gets no default route.
func TestRealNetworksIsolated(t *testing.T) {
	m := realManager(t)
	sfx := suffix(t)
	netA, netB := "ta"+sfx, "tb"+sfx
	idA, idB, idAB := "a-"+sfx, "b-"+sfx, "ab-"+sfx
	ids := []string{netA, netB, idA, idB, idAB, bridgeName(m.dataDir, netA), bridgeName(m.dataDir, netB)}
	fwBefore := firewallLines(t, ids...)
	e := env{t, m}
	t.Cleanup(func() {
		if after := firewallLines(t, ids...); !slices.Equal(after, fwBefore) {
			t.Errorf("iptables leftovers:\nbefore %q\nafter  %q", fwBefore, after)
		}
		assertEmptyState(t, m, netA, netB)
		noInterfaces(t, bridgeName(m.dataDir, netA), bridgeName(m.dataDir, netB))
	})
	na := e.network(NetworkOptions{Name: netA})
	nb := e.network(NetworkOptions{Name: netB, Internal: true, Subnet: netip.MustParsePrefix("10.213.200.0/24")})
	if nb.Gateway.String() != "10.213.200.1" {
		t.Fatalf("internal network gateway %s, want the given subnet's .1", nb.Gateway)
	}
	for _, n := range []Network{na, nb} {
		r, err := m.NewResolver(bg(), ResolverOptions{Network: n.Name})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(bg()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
	}
	nsA, rA := e.container(AttachOptions{ContainerID: idA, Names: []string{"alpha"}, Networks: []Endpoint{{Network: netA}}})
	nsB, rB := e.container(AttachOptions{ContainerID: idB, Names: []string{"beta"}, Networks: []Endpoint{{Network: netB}}})
	nsAB, rAB := e.container(AttachOptions{ContainerID: idAB, Names: []string{"both"}, Networks: []Endpoint{{Network: netB}, {Network: netA}}})
	ipA, ipB := rA.Attachments[0].IP, rB.Attachments[0].IP
	if got := []string{rAB.Attachments[0].Interface, rAB.Attachments[1].Interface}; !slices.Equal(got, []string{"eth0", "eth1"}) {
		t.Fatalf("interfaces %q, want eth0 eth1", got)
	}
	serveEcho(t, nsA, 7000)
	serveEcho(t, nsB, 7000)
	port := func(ip netip.Addr) string { return net.JoinHostPort(ip.String(), "7000") }

	if !dialFails(nsA, port(ipB)) || !dialFails(nsB, port(ipA)) {
		t.Fatal("containers on different networks reached each other")
	}
	for _, target := range []netip.Addr{ipA, ipB} {
		if got, err := roundTrip(t, nsAB, "tcp", port(target), "x"); err != nil || got != "echo:x" {
			t.Fatalf("container on both networks → %s: %q, %v", target, got, err)
		}
	}
	gwA := netip.AddrPortFrom(na.Gateway, 53)
	if rc, _ := askDNS(t, nsA, "udp", gwA, "beta"); rc != rcodeNXDomain {
		t.Fatalf("alpha resolved beta across networks: rcode %d", rc)
	}
	// The two-network container asks the first network's resolver and
	// still finds names of its second network.
	gwB := netip.AddrPortFrom(nb.Gateway, 53)
	if rc, ips := askDNS(t, nsAB, "udp", gwB, "alpha"); rc != rcodeOK || !slices.Equal(ips, []netip.Addr{ipA}) {
		t.Fatalf("both → alpha via %s: rcode %d %v", gwB, rc, ips)
	}
	routes := func(ns string) string {
		var b []byte
		inNetns(t, ns, func() error {
			var err error
			b, err = os.ReadFile("/proc/thread-self/net/route") // /proc/net follows the main thread
			return err
		})
		return string(b)
	}
	defaultRoutes := func(ns string) int {
		n := 0
		for _, l := range strings.Split(routes(ns), "\n")[1:] {
			if f := strings.Fields(l); len(f) > 2 && f[1] == "00000000" {
				n++
			}
		}
		return n
	}
	if got := defaultRoutes(nsB); got != 0 {
		t.Fatalf("container on the internal network has %d default routes, want none", got)
	}
	if got := defaultRoutes(nsAB); got != 1 {
		t.Fatalf("container on both networks has %d default routes, want 1 (via %s)", got, netA)
	}
	if got := defaultRoutes(nsA); got != 1 {
		t.Fatalf("container on %s has %d default routes, want 1", netA, got)
	}
}

// Locks down the host-global chains: two data dirs (two cornus installs,
// or a test beside a real one) share CORNUS-FORWARD; removing the last
// network of one keeps the other's rules and the chains.
func TestRealChainsSharedAcrossDataDirs(t *testing.T) {
	m1, m2 := realManager(t), realManager(t)
	sfx := suffix(t)
	n1, err := m1.EnsureNetwork(bg(), NetworkOptions{Name: "s1" + sfx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m1.RemoveNetwork(bg(), n1.Name) })
	n2, err := m2.EnsureNetwork(bg(), NetworkOptions{Name: "s2" + sfx, Subnet: netip.MustParsePrefix("10.213.201.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m2.RemoveNetwork(bg(), n2.Name) })
	if err := m1.RemoveNetwork(bg(), n1.Name); err != nil {
		t.Fatal(err)
	}
	ipt, _ := m2.iptables()
	if ok, err := ipt.firewallPresent(bg(), n2); err != nil || !ok {
		t.Fatalf("removing the other data dir's last network broke ours: %v", err)
	}
	if err := m2.RemoveNetwork(bg(), n2.Name); err != nil {
		t.Fatal(err)
	}
	if left := firewallLines(t, n1.Name, n2.Name); slices.ContainsFunc(left, func(l string) bool {
		return strings.Contains(l, n1.Name) || strings.Contains(l, n2.Name)
	}) {
		t.Fatalf("rules left: %q", left)
	}
}
