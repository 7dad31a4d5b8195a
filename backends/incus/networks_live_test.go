package incus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// TestNewNetworkAvoidsHostSubnets: an interface Incus does not manage
// (here a bare bridge, as one a failed create left behind was in CI)
// holds the subnet the next network would get, with a listener on its
// port 53 as that bridge's orphaned dnsmasq had. Incus lists such an
// interface without config, so a subnet chosen from Incus's list alone
// made the new bridge's dnsmasq fail with "address already in use", which
// EnsureNetwork then misread as "it exists" and failed with "not found".
func TestNewNetworkAvoidsHostSubnets(t *testing.T) {
	b := newTestBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	unlock, err := b.lock("networks") // no other create takes the subnet meanwhile
	if err != nil {
		t.Fatal(err)
	}
	next, err := b.pickSubnet(ctx, nil)
	if err != nil {
		unlock()
		t.Fatal(err)
	}
	link := "cinchost" + randomSuffix()[:6]
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	ip("link", "add", link, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", link).Run() })
	ip("addr", "add", next.String(), "dev", link)
	ip("link", "set", link, "up")
	// In use already: a leftover dnsmasq holds it, which is the case itself.
	if dns, err := net.ListenPacket("udp4", netip.AddrPortFrom(next.Addr(), 53).String()); err == nil {
		defer dns.Close()
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		unlock()
		t.Fatal(err)
	}
	unlock()

	name := "subnets-" + randomSuffix()
	n, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: name, Key: "default"})
	if err != nil {
		t.Fatalf("a new network beside a host interface on %s: %v", next, err)
	}
	t.Cleanup(func() { _ = b.RemoveNetwork(context.Background(), n.ID) })
	for _, s := range n.Subnets {
		if p, err := netip.ParsePrefix(s.Subnet); err == nil && p.Overlaps(next) {
			t.Fatalf("network %s got subnet %s, which the host's %s holds", n.ID, s, link)
		}
	}
}

// TestNetworkCreateDuringInterfaceChurn: host interfaces come and go while
// networks are made, as other runtimes' veths do in CI. A bridge's
// dnsmasq that walked the interfaces as one vanished exited with "failed
// to find list of interfaces: No such device", and incusd failed the
// create; such a failure is retried like incusd's own walk.
func TestNetworkCreateDuringInterfaceChurn(t *testing.T) {
	b := newTestBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	churnInterfaces(t, "cinchurn"+randomSuffix()[:6])
	for i := range 3 {
		n, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: "churn-" + randomSuffix(), Key: "default"})
		if err != nil {
			t.Fatalf("network %d while interfaces come and go: %v", i, err)
		}
		if err := b.RemoveNetwork(ctx, n.ID); err != nil {
			t.Fatalf("remove network %d while interfaces come and go: %v", i, err)
		}
	}
}

// churnInterfaces adds and deletes a bridge named link, with an
// address (dnsmasq walks interfaces by their addresses: TEST-NET-1, which
// nothing routes), every few milliseconds until the test ends: faster
// churn slows incusd, which walks every interface, to a crawl.
func churnInterfaces(t *testing.T, link string) {
	t.Helper()
	churn := exec.Command("ip", "-force", "-batch", "-")
	in, err := churn.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := churn.Start(); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := fmt.Fprintf(in, "link add %[1]s type bridge\naddr add 192.0.2.1/32 dev %[1]s\nlink set %[1]s up\nlink del %[1]s\n", link); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		_ = in.Close()
		_ = churn.Wait()
		_ = exec.Command("ip", "link", "del", link).Run()
	})
}

// TestVanishedMessages: the failures CI saw when a host interface vanished
// mid-walk are retried; others are not.
func TestVanishedMessages(t *testing.T) {
	for msg, want := range map[string]bool{
		`The DNS and DHCP service exited prematurely: exit status 5 ("dnsmasq: failed to find list of interfaces: No such device")`:                                                                     true,
		`Failed to delete bridge children interfaces: Failed to run: ip -d -j link show cinchurn55da7c: exit status 1 (RTNETLINK answers: No such device Cannot send link get request: No such device)`: true,
		`Failed to run: ip -d -j link show veth1234: exit status 1 (Device "veth1234" does not exist.)`:                                                                                                 true,
		`The DNS and DHCP service exited prematurely: exit status 2 ("dnsmasq: failed to create listening socket for 10.77.2.1: Address already in use")`:                                               false,
		`Network not found`: false,
	} {
		if got := vanished(errors.New(msg)); got != want {
			t.Errorf("vanished(%q) = %v, want %v", msg, got, want)
		}
	}
}
