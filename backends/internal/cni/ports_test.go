package cni

import (
	"net"
	"net/netip"
	"strconv"
	"testing"
)

// A publish without a host port gets one outside the kernel's ephemeral
// range (and NodePorts'), which no other container publishes and the host
// can bind: a port from the ephemeral range could be handed to a host
// process binding port 0, whose traffic the DNAT would then take (CI72).
func TestPickHostPorts(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	eph := ephemeralPorts()
	if eph[0] > eph[1] || eph[0] < 1 {
		t.Fatalf("ephemeral range %v", eph)
	}
	// Another container publishes every port but a few; the host holds
	// one of those.
	free := []int{12001, 12002, 12003}
	held, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(free[0]))
	if err != nil {
		t.Skipf("port %d taken on this host: %v", free[0], err)
	}
	defer held.Close()
	other := &Container{ID: "other", Attachments: []Attachment{{Network: "n"}}}
	for n := pickLow; n < 65536; n++ {
		if n != free[1] && n != free[2] {
			other.Attachments[0].Ports = append(other.Attachments[0].Ports, PortMapping{HostPort: uint16(n), ContainerPort: 1, Protocol: "tcp"})
		}
	}
	cf := containersFile{Containers: map[string]*Container{"other": other}}
	ports := []PortMapping{{HostIP: lo, ContainerPort: 80, Protocol: "tcp"}, {HostIP: lo, HostPort: 9, ContainerPort: 81, Protocol: "tcp"}}
	if err := pickHostPorts(cf, "me", ports, [2]int{40000, 60999}); err != nil {
		t.Fatalf("pick among two free ports: %v", err)
	}
	if p := int(ports[0].HostPort); p != free[1] && p != free[2] {
		t.Fatalf("picked %d: want one of the free ports %v", p, free[1:])
	}
	if ports[1].HostPort != 9 {
		t.Fatalf("a fixed host port changed to %d", ports[1].HostPort)
	}

	// Only ports of the ephemeral range left: refused, not taken from it.
	other.Attachments[0].Ports = nil
	for n := pickLow; n < 65536; n++ {
		if n < 50000 || n > 50010 {
			other.Attachments[0].Ports = append(other.Attachments[0].Ports, PortMapping{HostPort: uint16(n), ContainerPort: 1, Protocol: "tcp"})
		}
	}
	ports = []PortMapping{{HostIP: lo, ContainerPort: 80, Protocol: "tcp"}}
	if err := pickHostPorts(cf, "me", ports, [2]int{40000, 60999}); err == nil {
		t.Fatalf("picked %d, inside the ephemeral range", ports[0].HostPort)
	}

	// Unconstrained: never in the ephemeral range nor NodePorts'.
	for range 200 {
		ports = []PortMapping{{HostIP: lo, ContainerPort: 80, Protocol: "udp"}}
		if err := pickHostPorts(containersFile{}, "me", ports, eph); err != nil {
			t.Fatal(err)
		}
		p := int(ports[0].HostPort)
		if p < pickLow || p >= eph[0] && p <= eph[1] || p >= 30000 && p <= 32767 {
			t.Fatalf("picked %d: in the ephemeral range %v, NodePorts' or below %d", p, eph, pickLow)
		}
	}
}
