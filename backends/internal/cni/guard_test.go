package cni

import (
	"net"
	"net/netip"
	"os/exec"
	"testing"
	"time"
)

// Locks down the loopback guard (CORNUS-INPUT): once portmap has set
// route_localnet on a bridge, a container that routes 127.0.0.1 out of its
// eth0 still cannot get a datagram to a host service bound to 127.0.0.1.
// The control step lets this bridge's probes past the guard to show the probe would otherwise
// arrive.
func TestRealLoopbackGuard(t *testing.T) {
	m := realManager(t)
	sfx := suffix(t)
	netName, id := "tg"+sfx, "g-"+sfx
	e := env{t, m}
	n := e.network(NetworkOptions{Name: netName})
	lo := netip.MustParseAddr("127.0.0.1")
	ns, _ := e.container(AttachOptions{ContainerID: id, Networks: []Endpoint{{Network: netName}},
		Ports: []PortMapping{{HostIP: lo, HostPort: uint16(freePort(t, "tcp")), ContainerPort: 80, Protocol: "tcp"}}})
	host, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close() })
	// Inside the container: send 127.0.0.1 out of eth0 to the gateway, as
	// a container with raw sockets could without any of this.
	for _, args := range [][]string{
		{"sysctl", "-qw", "net.ipv4.conf.eth0.route_localnet=1"},
		{"ip", "route", "del", "local", "127.0.0.1", "table", "local"},
		{"ip", "route", "del", "local", "127.0.0.0/8", "table", "local"},
		{"ip", "route", "add", "127.0.0.1/32", "via", n.Gateway.String(), "dev", "eth0"},
	} {
		if out, err := exec.Command("nsenter", append([]string{"--net=" + ns}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	arrives := func(probe string) bool {
		inNetns(t, ns, func() error {
			c, err := net.Dial("udp4", host.LocalAddr().String())
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Write([]byte(probe))
			return err
		})
		buf := make([]byte, 64)
		for {
			_ = host.SetReadDeadline(time.Now().Add(time.Second))
			n, _, err := host.ReadFrom(buf)
			if err != nil {
				return false
			}
			if string(buf[:n]) == probe {
				return true
			}
		}
	}
	if arrives("guarded") {
		t.Fatal("a container got a datagram to a host service bound to 127.0.0.1")
	}
	// The control accepts this bridge's probes first in INPUT instead of
	// removing the guard: other test processes re-ensure the guard
	// concurrently, and others drop such packets too (kube-proxy's
	// KUBE-FIREWALL, when a cluster runs on the host).
	ipt, _ := m.iptables()
	accept := rule{"filter", "INPUT", []string{"-i", n.Bridge, "-d", "127.0.0.1/32", "-p", "udp",
		"-m", "comment", "--comment", "cornus guard test control " + sfx, "-j", "ACCEPT"}}
	t.Cleanup(func() { _ = ipt.remove(bg(), accept) })
	if err := ipt.ensure(bg(), accept, true); err != nil {
		t.Fatal(err)
	}
	reached := arrives("unguarded")
	if err := ipt.remove(bg(), accept); err != nil {
		t.Fatal(err)
	}
	if !reached {
		t.Fatal("control: without the guard the probe did not arrive either, so this test proves nothing")
	}
}
