package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// Routes, as spec names them.
const (
	Client  = spec.RouteClient
	Gateway = spec.RouteGateway
	Cluster = spec.RouteCluster
	Deny    = spec.RouteDeny
)

// Destination is what a connection wants to reach: a host name or an IP
// literal, the IP when known, and the port (0: any).
type Destination struct {
	Host string
	IP   netip.Addr
	Port int
}

// ParseDestination reads "host", "host:port", "1.2.3.4:80" or "[::1]:443".
func ParseDestination(s string) (Destination, error) {
	host, port := s, 0
	if h, p, ok := splitHostPort(s); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Destination{}, fmt.Errorf("destination %q: port %q is not 1-65535", s, p)
		}
		host, port = h, n
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return Destination{}, fmt.Errorf("destination %q: no host", s)
	}
	d := Destination{Host: host, Port: port}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		d.IP, d.Host = ip.Unmap(), ip.Unmap().String()
	}
	return d, nil
}

// splitHostPort splits host:port, accepting [v6]:port; a bare IPv6
// address has no port.
func splitHostPort(s string) (string, string, bool) {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]:"); i > 0 {
			return s[1:i], s[i+2:], true
		}
		return strings.Trim(s, "[]"), "", false
	}
	if strings.Count(s, ":") == 1 {
		h, p, _ := strings.Cut(s, ":")
		return h, p, true
	}
	return s, "", false
}

// String is host:port (host alone when any port).
func (d Destination) String() string {
	h := d.Host
	if d.IP.Is6() {
		h = "[" + h + "]"
	}
	if d.Port == 0 {
		return h
	}
	return h + ":" + strconv.Itoa(d.Port)
}

// Decision is a route and what decided it.
type Decision struct {
	Route string
	// By names the deciding rule ("rules[2] *.corp.example"), the PAC
	// result ("PAC: PROXY client"), or "default".
	By string
	// Explicit: the deciding rule names this destination, no wildcard
	// (a host without * or ?, an IP, or a CIDR inside a loopback or
	// link-local block): the client then dials it even on its own
	// loopback (Local). A PAC or the default names nothing.
	Explicit bool
}

// Policy is a compiled egress block.
type Policy struct {
	Mode    string
	rules   []rule
	def     string
	pac     Decider
	srcPath string // where the policy came from, for messages
}

// Compile checks and compiles e; at names it in errors ("services.web.egress").
func Compile(e *spec.Egress, at string, o PACOptions) (*Policy, error) {
	if e == nil {
		return &Policy{def: Cluster, srcPath: at}, nil
	}
	if err := e.Validate(at); err != nil {
		return nil, err
	}
	p := &Policy{Mode: e.Mode, def: e.Default, srcPath: at}
	if p.def == "" {
		p.def = Cluster
	}
	for i, r := range e.Rules {
		cr, err := parseRule(r.Pattern, r.Route)
		if err != nil {
			return nil, fmt.Errorf("%s.rules[%d]: %w", at, i, err)
		}
		cr.name = fmt.Sprintf("rules[%d] %s", i, r.Pattern)
		p.rules = append(p.rules, cr)
	}
	if e.Script != "" {
		var err error
		if o.Runner != nil {
			p.pac, err = o.Runner.Load(e.Script, o)
		} else {
			p.pac, err = NewPAC(e.Script, o)
		}
		if err != nil {
			return nil, fmt.Errorf("%s.script: %w", at, err)
		}
	}
	return p, nil
}

// Decide routes d: the PAC script when there is one (it overrides the
// rules, as spec.Egress says), else the first matching rule, else the
// default.
func (p *Policy) Decide(d Destination) Decision {
	if p.pac != nil {
		return p.pac.Decide(d, p.def)
	}
	for _, r := range p.rules {
		if r.match(d) {
			return Decision{Route: r.route, By: r.name, Explicit: r.explicit}
		}
	}
	return Decision{Route: p.def, By: "default"}
}

// UsesRoute reports whether any rule or the default can send to route
// (a PAC script may: it is counted as possibly using every route).
func (p *Policy) UsesRoute(route string) bool {
	if p.def == route || p.pac != nil {
		return true
	}
	for _, r := range p.rules {
		if r.route == route {
			return true
		}
	}
	return false
}
