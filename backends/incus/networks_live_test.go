package incus

import (
	"context"
	"errors"
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
