package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
)

// Guard checks and dials egress destinations.
type Guard struct {
	// Allowed exempts an address from the check (nil: none): an
	// operator's allow-list, a policy rule that names the destination.
	Allowed func(netip.Addr) bool
	// Lookup resolves a name (nil: net.DefaultResolver's addresses).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Own lists this machine's addresses (nil: its interfaces').
	Own func() ([]netip.Addr, error)
}

// RefusedError is a destination that resolved to an address on the
// dialing machine's own network. It is a permission-denied error.
type RefusedError struct {
	Host string
	Addr netip.Addr
	Why  string // "a loopback address", "an address of this machine", ...
}

func (e *RefusedError) Error() string {
	if e.Host == e.Addr.String() {
		return fmt.Sprintf("%s is %s", e.Host, e.Why)
	}
	return fmt.Sprintf("%s resolves to %s, %s", e.Host, e.Addr, e.Why)
}

// Unwrap makes it errdefs.IsPermissionDenied.
func (e *RefusedError) Unwrap() error { return errdefs.ErrPermissionDenied }

// Check resolves host (an IP literal is its own address) and checks each
// of its addresses: it returns them all, or a *RefusedError for the first
// refused (one bad address refuses the name: its other answers may be
// round-robin bait).
func (g Guard) Check(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var own []netip.Addr
	for _, a := range addrs {
		if g.Allowed != nil && g.Allowed(a) {
			continue
		}
		if why := egress.Local(a); why != "" {
			return nil, &RefusedError{Host: host, Addr: a, Why: why}
		}
		if own == nil {
			if own, err = g.own(); err != nil {
				return nil, fmt.Errorf("list this machine's addresses: %w", err)
			}
		}
		for _, o := range own {
			if o == a {
				return nil, &RefusedError{Host: host, Addr: a, Why: "an address of this machine"}
			}
		}
	}
	return addrs, nil
}

func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.Trim(host, "[]")
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	lookup := g.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	found, err := lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s resolves to no address", host)
	}
	addrs := make([]netip.Addr, len(found))
	for i, a := range found {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

func (g Guard) own() ([]netip.Addr, error) {
	if g.Own != nil {
		return g.Own()
	}
	return InterfaceAddrs()
}

// InterfaceAddrs are the addresses of this machine's interfaces.
func InterfaceAddrs() ([]netip.Addr, error) {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := []netip.Addr{}
	for _, a := range ifaddrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// Dial checks d's host and connects to its port on the first of the
// checked addresses that answers.
func (g Guard) Dial(ctx context.Context, d egress.Destination) (net.Conn, error) {
	if d.Port == 0 {
		return nil, fmt.Errorf("%w: %s: no port", errdefs.ErrInvalidArgument, d)
	}
	addrs, err := g.Check(ctx, d.Host)
	if err != nil {
		return nil, err
	}
	var dl net.Dialer
	var errs []error
	for i, a := range addrs {
		// Each address gets its share of what time is left, as net.Dialer
		// spreads it: one that never answers leaves time for the next.
		actx, cancel := ctx, context.CancelFunc(func() {})
		if end, ok := ctx.Deadline(); ok && i < len(addrs)-1 {
			actx, cancel = context.WithTimeout(ctx, time.Until(end)/time.Duration(len(addrs)-i))
		}
		conn, err := dl.DialContext(actx, "tcp", netip.AddrPortFrom(a, uint16(d.Port)).String())
		cancel()
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// ParseAllow reads an allow-list: comma-separated CIDRs or addresses
// ("10.0.0.0/8,127.0.0.1"), blanks ignored.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			ip, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%q is neither a CIDR nor an address", f)
			}
			f = ip.Unmap().String() + "/" + strconv.Itoa(ip.Unmap().BitLen())
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR: %v", f, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// In is an Allowed for prefixes.
func In(prefixes []netip.Prefix) func(netip.Addr) bool {
	return func(a netip.Addr) bool {
		for _, p := range prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
}
