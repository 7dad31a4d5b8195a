package cni

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
)

// parseSubnetBase reads "A.B" or "A.B.0.0/16" into the two octets every
// allocated /24 (A.B.N.0/24) starts with.
func parseSubnetBase(s string) ([2]byte, error) {
	var b [2]byte
	if p, err := netip.ParsePrefix(s); err == nil {
		if !p.Addr().Is4() || p.Bits() != 16 || p.Masked() != p {
			return b, fmt.Errorf("want two octets (10.4) or an IPv4 /16 (10.4.0.0/16): %w", errdefs.ErrInvalidArgument)
		}
		a := p.Addr().As4()
		return [2]byte{a[0], a[1]}, nil
	}
	parts := strings.Split(s, ".")
	if len(parts) != 2 {
		return b, fmt.Errorf("want two octets (10.4) or an IPv4 /16 (10.4.0.0/16): %w", errdefs.ErrInvalidArgument)
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 8)
		if err != nil || p == "" || len(p) > 1 && p[0] == '0' {
			return b, fmt.Errorf("octet %q: want 0 to 255: %w", p, errdefs.ErrInvalidArgument)
		}
		b[i] = byte(n)
	}
	return b, nil
}

// checkSubnet accepts an IPv4 prefix with room for a gateway and at least
// one container, given in its canonical (masked) form.
func checkSubnet(p netip.Prefix) error {
	if !p.IsValid() || !p.Addr().Is4() {
		return fmt.Errorf("subnet %s: only IPv4 subnets are supported: %w", p, errdefs.ErrInvalidArgument)
	}
	if p.Bits() < 8 || p.Bits() > 30 {
		return fmt.Errorf("subnet %s: prefix length must be 8 to 30: %w", p, errdefs.ErrInvalidArgument)
	}
	if p.Masked() != p {
		return fmt.Errorf("subnet %s: host bits set, did you mean %s: %w", p, p.Masked(), errdefs.ErrInvalidArgument)
	}
	return nil
}

// usableHost reports whether a is an address of p that a gateway or a
// container may take: not the network or broadcast address.
func usableHost(p netip.Prefix, a netip.Addr) bool {
	if !a.Is4() || !p.Contains(a) || a == p.Addr() {
		return false
	}
	return a != lastAddr(p)
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// allocateSubnet picks the lowest base.N.0/24 (N from 1 to 255, then 0)
// that overlaps neither a network we already hold nor an address the host
// already has (another bridge, the uplink), so routing stays unambiguous.
func allocateSubnet(base [2]byte, taken []netip.Prefix) (netip.Prefix, error) {
	for i := 1; i <= 256; i++ {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{base[0], base[1], byte(i % 256), 0}), 24)
		free := true
		for _, t := range taken {
			if t.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /24 left in %d.%d.0.0/16: remove unused networks or set %s: %w",
		base[0], base[1], EnvSubnetBase, errdefs.ErrResourceExhausted)
}
