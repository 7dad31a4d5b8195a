package egress

import (
	"slices"

	"github.com/cornus-dev/cornus/spec"
)

// Routed lists, sorted, the services of p whose egress policy may send
// a connection by route (a PAC script counts as possibly any route).
func Routed(p spec.Project, route string) ([]string, error) {
	var out []string
	for name, a := range p.Services {
		if a.Egress == nil {
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
