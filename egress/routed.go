package egress

import (
	"slices"

	"github.com/cornus-dev/cornus/spec"
)

// Routed lists, sorted, the services of p whose egress policy may send
// a connection by route. A PAC script counts as possibly any route and
// is not compiled here: this runs where tenants' scripts must not (the
// server, see package sandbox).
func Routed(p spec.Project, route string) ([]string, error) {
	var out []string
	for name, a := range p.Services {
		if a.Egress == nil {
			continue
		}
		if a.Egress.Script != "" {
			out = append(out, name)
			continue
		}
		pol, err := Compile(a.Egress, "services."+name+".egress", PACOptions{})
		if err != nil {
			return nil, err
		}
		if pol.UsesRoute(route) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}
