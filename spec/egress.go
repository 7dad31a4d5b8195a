package spec

// Egress modes: how a replica's outbound traffic reaches the egress policy.
const (
	EgressEnv         = "env"         // HTTP(S)_PROXY variables only
	EgressProxy       = "proxy"       // explicit proxy plus variables
	EgressTransparent = "transparent" // all TCP redirected, no cooperation needed
)

// Egress routes: where a matching connection goes.
const (
	RouteClient  = "client"  // out through the developer's machine
	RouteGateway = "gateway" // out through the cluster's egress gateway
	RouteCluster = "cluster" // directly from the cluster network
	RouteDeny    = "deny"    // refused
)

// Egress is the client-side egress policy of an app (Compose's
// x-cornus-egress). Rules match first-to-last; Script, when set, is a PAC
// file whose FindProxyForURL result overrides them.
type Egress struct {
	Mode    string       `yaml:"mode,omitempty" json:"mode,omitempty"`
	Rules   []EgressRule `yaml:"rules,omitempty" json:"rules,omitempty"`
	Default string       `yaml:"default,omitempty" json:"default,omitempty"`
	Script  string       `yaml:"script,omitempty" json:"script,omitempty"`
}

// EgressRule sends destinations matching Pattern (a host glob such as
// "*.example.com", a CIDR, or host:port) to Route.
type EgressRule struct {
	Pattern string `yaml:"pattern" json:"pattern"`
	Route   string `yaml:"route" json:"route"`
}

// Validate checks the policy on its own (as an extension is parsed), with
// problem paths prefixed by at.
func (e *Egress) Validate(at string) error {
	var ps Problems
	e.validate(at, &ps)
	return ps.Err("")
}
