package cni

import (
	"net/netip"
	"testing"

	"github.com/containerd/errdefs"
)

// Locks down CORNUS_CNI_SUBNET_BASE parsing: "A.B" or "A.B.0.0/16" only.
func TestParseSubnetBase(t *testing.T) {
	for in, want := range map[string][2]byte{"10.4": {10, 4}, "10.4.0.0/16": {10, 4}, "172.31": {172, 31}, "0.0": {0, 0}} {
		if got, err := parseSubnetBase(in); err != nil || got != want {
			t.Errorf("parseSubnetBase(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "10", "10.4.1", "10.256", "10.-1", "10.04", "10.4.0.0/24", "10.4.1.0/16", "fd00::/16", "a.b", "10.4."} {
		if _, err := parseSubnetBase(bad); !errdefs.IsInvalidArgument(err) {
			t.Errorf("parseSubnetBase(%q) = %v, want InvalidArgument", bad, err)
		}
	}
}

// Locks down allocation: lowest free /24, skipping anything overlapping a
// taken prefix (ours or the host's), and a ResourceExhausted when full.
func TestAllocateSubnet(t *testing.T) {
	base := [2]byte{10, 4}
	taken := []netip.Prefix{
		netip.MustParsePrefix("10.4.1.0/24"),
		netip.MustParsePrefix("10.4.2.128/25"), // a host address's subnet
		netip.MustParsePrefix("10.4.4.0/22"),   // a caller-given wider subnet
	}
	got, err := allocateSubnet(base, taken)
	if err != nil || got != netip.MustParsePrefix("10.4.3.0/24") {
		t.Fatalf("allocateSubnet = %s, %v; want 10.4.3.0/24", got, err)
	}
	taken = append(taken, got)
	if got, _ := allocateSubnet(base, taken); got != netip.MustParsePrefix("10.4.8.0/24") {
		t.Fatalf("next = %s, want 10.4.8.0/24", got)
	}
	if _, err := allocateSubnet(base, []netip.Prefix{netip.MustParsePrefix("10.4.0.0/16")}); !errdefs.IsResourceExhausted(err) {
		t.Fatalf("full base: %v, want ResourceExhausted", err)
	}
}

// Locks down caller-given subnets: IPv4, masked, room for a gateway.
func TestCheckSubnet(t *testing.T) {
	for _, ok := range []string{"10.9.0.0/16", "192.168.5.0/24", "10.0.0.0/30"} {
		if err := checkSubnet(netip.MustParsePrefix(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"10.9.0.1/16", "10.0.0.0/31", "10.0.0.0/7", "fd00::/64"} {
		if err := checkSubnet(netip.MustParsePrefix(bad)); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: %v, want InvalidArgument", bad, err)
		}
	}
	p := netip.MustParsePrefix("10.0.0.0/24")
	for a, want := range map[string]bool{"10.0.0.0": false, "10.0.0.1": true, "10.0.0.254": true, "10.0.0.255": false, "10.0.1.1": false} {
		if got := usableHost(p, netip.MustParseAddr(a)); got != want {
			t.Errorf("usableHost(%s) = %t", a, got)
		}
	}
}

// Fuzz: no base string makes the parser panic, and what it accepts
// round-trips to the same octets.
func FuzzParseSubnetBase(f *testing.F) {
	for _, s := range []string{"10.4", "10.4.0.0/16", "1.2.3", "::", "999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseSubnetBase(s)
		if err != nil {
			return
		}
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{b[0], b[1], 0, 0}), 16)
		if again, err := parseSubnetBase(p.String()); err != nil || again != b {
			t.Fatalf("%q → %v does not round-trip: %v %v", s, b, again, err)
		}
	})
}
