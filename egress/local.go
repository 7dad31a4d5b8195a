package egress

import "net/netip"

// Local says why ip is no destination to dial on a workload's behalf from
// a machine cornus runs on ("" when it is one): it reaches that machine
// itself or its link rather than somewhere out there. Loopback,
// link-local (169.254.169.254, the cloud metadata service, among them),
// unspecified or "this network" (0.0.0.0 reaches the local host),
// multicast and broadcast. The gateway route (on the server) and the
// client route (on the developer's machine) refuse these, and the
// machine's own addresses, unless told otherwise.
func Local(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "not an address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsUnspecified(), ip.Is4() && ip.As4()[0] == 0:
		return "an unspecified address"
	case ip.IsMulticast():
		return "a multicast address"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	return ""
}

// LocalPrefix reports whether p lies inside one loopback, link-local or
// unspecified block: a rule naming it names such addresses on purpose.
func LocalPrefix(p netip.Prefix) bool {
	for _, b := range [...]netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("::/128"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fe80::/10"),
	} {
		if p.Addr().Is4() == b.Addr().Is4() && p.Bits() >= b.Bits() && b.Contains(p.Addr()) {
			return true
		}
	}
	return false
}
