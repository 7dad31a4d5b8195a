package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// rule is one compiled pattern: a CIDR or a host glob, with an optional
// port.
type rule struct {
	name   string
	route  string
	prefix netip.Prefix // CIDR rules
	glob   string       // host rules, lowercase
	port   int          // 0: any
	// explicit: the pattern names its destinations (see Decision.Explicit)
	explicit bool
}

// parseRule reads PATTERN (glob or CIDR, optional :port) and ROUTE.
func parseRule(pattern, route string) (rule, error) {
	if strings.Contains(route, ":") || strings.Contains(route, "/") {
		return rule{}, fmt.Errorf("route %q: a route is client, gateway, cluster or deny; a gateway is configured on the server (CORNUS_EGRESS_GATEWAY), not by URL", route)
	}
	switch route {
	case Client, Gateway, Cluster, Deny:
	default:
		return rule{}, fmt.Errorf("route %q is not one of client, gateway, cluster, deny", route)
	}
	r := rule{route: route}
	pat := strings.ToLower(strings.TrimSpace(pattern))
	if pat == "" {
		return rule{}, fmt.Errorf("pattern: empty; want a host glob, CIDR or host:port")
	}
	// A CIDR may carry a port after it: 10.0.0.0/8:443.
	if i := strings.LastIndex(pat, ":"); i > 0 && strings.Contains(pat, "/") && !strings.Contains(pat[i:], "/") {
		if n, err := strconv.Atoi(pat[i+1:]); err == nil {
			r.port, pat = n, pat[:i]
		}
	}
	if strings.Contains(pat, "/") {
		pfx, err := netip.ParsePrefix(strings.Trim(pat, "[]"))
		if err != nil {
			return rule{}, fmt.Errorf("pattern %q: not a CIDR: %v", pattern, err)
		}
		r.prefix = pfx.Masked()
		r.explicit = LocalPrefix(r.prefix)
		return r, checkPort(r, pattern)
	}
	host, port, ok := splitHostPort(pat)
	if ok {
		n, err := strconv.Atoi(port)
		if err != nil {
			return rule{}, fmt.Errorf("pattern %q: port %q is not a number", pattern, port)
		}
		r.port = n
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return rule{}, fmt.Errorf("pattern %q: no host", pattern)
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '*' || c == '?' || c == '_' || c == ':') {
			return rule{}, fmt.Errorf("pattern %q: %q is not allowed in a host glob", pattern, c)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		r.prefix = netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())
		r.explicit = true
		return r, checkPort(r, pattern)
	}
	r.glob = host
	r.explicit = !strings.ContainsAny(host, "*?")
	return r, checkPort(r, pattern)
}

func checkPort(r rule, pattern string) error {
	if r.port < 0 || r.port > 65535 {
		return fmt.Errorf("pattern %q: port %d is not 0-65535", pattern, r.port)
	}
	return nil
}

func (r rule) match(d Destination) bool {
	if r.port != 0 && d.Port != r.port {
		return false
	}
	if r.prefix.IsValid() {
		return d.IP.IsValid() && r.prefix.Contains(d.IP)
	}
	return globMatch(r.glob, d.Host)
}

// globMatch is shell-style matching where '*' spans any characters, dots
// included (PAC's shExpMatch), and '?' one character. It runs in
// O(len(p)·len(s)) with no recursion.
func globMatch(p, s string) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
