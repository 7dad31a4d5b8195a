package cni

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
)

// env is one test's networks and containers, torn down in t.Cleanup even
// when the test fails halfway.
type env struct {
	t *testing.T
	m *Manager
}

func (e env) network(opts NetworkOptions) Network {
	e.t.Helper()
	n, err := e.m.EnsureNetwork(bg(), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := e.m.RemoveNetwork(bg(), n.Name); err != nil {
			e.t.Errorf("cleanup: %v", err)
		}
	})
	return n
}

// container creates a pinned netns and attaches it.
func (e env) container(o AttachOptions) (string, AttachResult) {
	e.t.Helper()
	ns, err := e.m.CreateNetns(bg(), o.ContainerID)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := e.m.RemoveNetns(bg(), o.ContainerID); err != nil {
			e.t.Errorf("cleanup: %v", err)
		}
	})
	o.Netns = ns
	res, err := e.m.Attach(bg(), o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if _, err := e.m.Detach(bg(), DetachOptions{ContainerID: o.ContainerID}); err != nil {
			e.t.Errorf("cleanup: %v", err)
		}
	})
	return ns, res
}

// Locks down the whole life of a network on the real plugins: two
// containers talk, resolve each other by DNS and hosts file, publish TCP
// and UDP on 127.0.0.1 only, and teardown leaves nothing behind.
func TestRealNetworkLifecycle(t *testing.T) {
	m := realManager(t)
	sfx := suffix(t)
	netName, id1, id2 := "t"+sfx+"_default", "c1-"+sfx, "c2-"+sfx
	ids := []string{netName, id1, id2, bridgeName(m.dataDir, netName)}
	fwBefore := firewallLines(t, ids...)
	e := env{t, m}

	n := e.network(NetworkOptions{Name: netName})
	if n.Subnet.Bits() != 24 || !strings.HasPrefix(n.Subnet.String(), testSubnetBase+".") || n.Gateway != n.Subnet.Addr().Next() {
		t.Fatalf("network %+v: want a /24 from %s with gateway .1", n, testSubnetBase)
	}
	if again, err := m.EnsureNetwork(bg(), NetworkOptions{Name: netName}); err != nil || again != n {
		t.Fatalf("EnsureNetwork again = %+v, %v; want the same network", again, err)
	}
	res, err := m.NewResolver(bg(), ResolverOptions{Network: netName})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Start(bg()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Close() })

	hosts1 := filepath.Join(t.TempDir(), "hosts")
	tcpPort, udpPort := freePort(t, "tcp"), freePort(t, "udp")
	lo := netip.MustParseAddr("127.0.0.1")
	ns1, r1 := e.container(AttachOptions{
		ContainerID: id1, Hostname: "web-1", Names: []string{"web"}, HostsPath: hosts1,
		Networks: []Endpoint{{Network: netName}},
		Ports: []PortMapping{
			{HostIP: lo, HostPort: uint16(tcpPort), ContainerPort: 8080, Protocol: "tcp"},
			{HostIP: lo, HostPort: uint16(udpPort), ContainerPort: 8081, Protocol: "udp"},
		},
	})
	static := n.Subnet.Addr().Next().Next().Next().Next() // .4
	ns2, r2 := e.container(AttachOptions{
		ContainerID: id2, Names: []string{"db"},
		Networks: []Endpoint{{Network: netName, Aliases: []string{"database"}, IPv4: static}},
	})
	a1, a2 := r1.Attachments[0], r2.Attachments[0]
	for _, a := range []Attachment{a1, a2} {
		if a.Interface != "eth0" || !n.Subnet.Contains(a.IP) || a.PrefixLen != 24 || a.Gateway != n.Gateway || len(a.MAC) != 17 {
			t.Fatalf("attachment %+v: want eth0 in %s/24 via %s with a MAC", a, n.Subnet, n.Gateway)
		}
	}
	if a2.IP != static {
		t.Fatalf("static address: got %s, want %s", a2.IP, static)
	}

	// Container to container, over the bridge.
	stop1 := []func(){serveEcho(t, ns1, 8080), serveEcho(t, ns1, 8081)}
	serveEcho(t, ns2, 9000)
	if got, err := roundTrip(t, ns1, "tcp", net.JoinHostPort(a2.IP.String(), "9000"), "hi"); err != nil || got != "echo:hi" {
		t.Fatalf("c1 → c2 tcp: %q, %v", got, err)
	}
	if got, err := roundTrip(t, ns2, "udp", net.JoinHostPort(a1.IP.String(), "8081"), "yo"); err != nil || got != "echo:yo" {
		t.Fatalf("c2 → c1 udp: %q, %v", got, err)
	}

	// DNS on the gateway, asked from inside c1.
	gw := netip.AddrPortFrom(n.Gateway, 53)
	for _, proto := range []string{"udp", "tcp"} {
		for name, want := range map[string]netip.Addr{"db": a2.IP, "DataBase": a2.IP, "web": a1.IP} {
			if rc, ips := askDNS(t, ns1, proto, gw, name); rc != rcodeOK || !slices.Equal(ips, []netip.Addr{want}) {
				t.Fatalf("DNS %s/%s: rcode %d %v, want %s", name, proto, rc, ips, want)
			}
		}
		if rc, _ := askDNS(t, ns1, proto, gw, "nosuch"); rc != rcodeNXDomain {
			t.Fatalf("DNS nosuch/%s: rcode %d, want NXDOMAIN", proto, rc)
		}
		if rc, _ := askDNS(t, ns1, proto, gw, "example.com"); rc != rcodeServFail {
			t.Fatalf("DNS example.com/%s with no upstream: rcode %d, want SERVFAIL", proto, rc)
		}
	}

	// Hosts file of c1: itself and its peer, by every name.
	hostsHas(t, hosts1, a1.IP.String()+"\tweb-1", a1.IP.String()+"\tweb", a2.IP.String()+"\tdb database")

	// Published ports reach the listeners inside c1, on 127.0.0.1 only.
	if got, err := roundTrip(t, "", "tcp", net.JoinHostPort("127.0.0.1", itoa(tcpPort)), "pt"); err != nil || got != "echo:pt" {
		t.Fatalf("published tcp: %q, %v", got, err)
	}
	if got, err := roundTrip(t, "", "udp", net.JoinHostPort("127.0.0.1", itoa(udpPort)), "pu"); err != nil || got != "echo:pu" {
		t.Fatalf("published udp: %q, %v", got, err)
	}
	dnat := slices.DeleteFunc(firewallLines(t, id1), func(l string) bool { return !strings.Contains(l, "DNAT") || !strings.Contains(l, "-A CNI-DN-") })
	if len(dnat) != 2 || !slices.ContainsFunc(dnat, func(l string) bool { return strings.Contains(l, "-d 127.0.0.1/32") }) {
		t.Fatalf("portmap DNAT rules %q: want two, bound to 127.0.0.1", dnat)
	}
	ports := bridgePorts(t, n.Bridge)
	if len(ports) != 2 {
		t.Fatalf("bridge %s ports %q: want the two host-side veths", n.Bridge, ports)
	}
	if err := m.RemoveNetwork(bg(), netName); !errdefs.IsConflict(err) {
		t.Fatalf("RemoveNetwork while attached: %v, want Conflict", err)
	}

	// c2 leaves: c1's hosts file and the resolver forget it.
	if _, err := m.Detach(bg(), DetachOptions{ContainerID: id2}); err != nil {
		t.Fatal(err)
	}
	if names := hostsNames(t, hosts1); slices.Contains(names, "db") || slices.Contains(names, "database") {
		b, _ := os.ReadFile(hosts1)
		t.Fatalf("hosts file still names db after detach:\n%s", b)
	}
	if rc, _ := askDNS(t, ns1, "udp", gw, "db"); rc != rcodeNXDomain {
		t.Fatalf("DNS db after detach: rcode %d, want NXDOMAIN", rc)
	}

	// c1's namespace dies first (a crash: its processes and pin are gone):
	// Detach still cleans up.
	for _, stop := range stop1 {
		stop()
	}
	for _, id := range []string{id1, id2} {
		if err := m.RemoveNetns(bg(), id); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // idempotent
		if _, err := m.Detach(bg(), DetachOptions{ContainerID: id1}); err != nil {
			t.Fatal(err)
		}
	}
	_ = res.Close()
	if err := m.RemoveNetwork(bg(), netName); err != nil {
		t.Fatal(err)
	}

	if after := firewallLines(t, ids...); !slices.Equal(after, fwBefore) {
		t.Errorf("iptables leftovers:\nbefore %q\nafter  %q", fwBefore, after)
	}
	noInterfaces(t, append(ports, n.Bridge)...)
	assertEmptyState(t, m, netName)
}

func hostsHas(t *testing.T, path string, lines ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if !slices.Contains(strings.Split(string(b), "\n"), l) {
			t.Fatalf("hosts file lacks %q:\n%s", l, b)
		}
	}
}

// hostsNames lists the names a hosts file gives addresses (not its
// comments, which name the network: a random suffix may spell "db").
func hostsNames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && !strings.HasPrefix(f[0], "#") {
			names = append(names, f[1:]...)
		}
	}
	return names
}

// assertEmptyState checks no lease, cache entry, record or pin is left.
func assertEmptyState(t *testing.T, m *Manager, networks ...string) {
	t.Helper()
	for _, n := range networks {
		if _, err := os.Stat(filepath.Join(m.ipamDir(), n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("IPAM dir of %s still there: %v", n, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(m.cacheDir(), "results")); len(ents) > 0 {
		t.Errorf("libcni cache still holds %d results", len(ents))
	}
	if cs, err := m.ListContainers(bg()); err != nil || len(cs) > 0 {
		t.Errorf("store still holds %v (%v)", cs, err)
	}
	if pins, err := m.ListNetns(bg()); err != nil || len(pins) > 0 {
		t.Errorf("netns pins left: %v (%v)", pins, err)
	}
	if ns, err := m.ListNetworks(bg()); err != nil || len(ns) > 0 {
		t.Errorf("networks left: %v (%v)", ns, err)
	}
}

// bridgePorts lists the interfaces enslaved to bridge (host-side veths).
func bridgePorts(t *testing.T, bridge string) []string {
	t.Helper()
	ents, err := os.ReadDir("/sys/class/net/" + bridge + "/brif")
	if err != nil {
		t.Fatalf("bridge %s: %v", bridge, err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// noInterfaces fails for each of names that still exists. The kernel
// destroys a dropped namespace (and its veths) asynchronously, so it polls.
func noInterfaces(t *testing.T, names ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, n := range names {
		for {
			_, err := net.InterfaceByName(n)
			if err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("interface %s left behind", n)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// leases lists host-local's lease files (named by address) of network.
func leases(t *testing.T, m *Manager, network string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(m.ipamDir(), network))
	var out []string
	for _, e := range ents {
		if _, err := netip.ParseAddr(e.Name()); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// freePort finds a host port nothing listens on for network.
func freePort(t *testing.T, network string) int {
	t.Helper()
	if network == "udp" {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		return pc.LocalAddr().(*net.UDPAddr).Port
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// dialFails reports whether a TCP connection from netns to addr fails
// within a short timeout (dropped or refused).
func dialFails(netns, addr string) bool {
	err := Do(netns, func() error {
		c, err := net.DialTimeout("tcp4", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
	return err != nil
}
