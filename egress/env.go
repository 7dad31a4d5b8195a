package egress

import (
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// proxyVars are the variables env mode carries from the client.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"}

// InjectEnv gives every app of p whose egress mode is env the caller's
// proxy variables (from environ, either case), in both spellings programs
// read, without overriding what the app sets itself. It returns the
// apps it changed.
func InjectEnv(p *spec.Project, environ []string) []string {
	vals := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		for _, name := range proxyVars {
			if k == name || k == strings.ToLower(name) {
				if _, set := vals[name]; !set || k == name {
					vals[name] = v
				}
			}
		}
	}
	var changed []string
	for name, a := range p.Services {
		if a.Egress == nil || a.Egress.Mode != spec.EgressEnv || len(vals) == 0 {
			continue
		}
		if a.Env == nil {
			a.Env = map[string]string{}
		}
		for k, v := range vals {
			for _, key := range []string{k, strings.ToLower(k)} {
				if _, own := a.Env[key]; !own {
					a.Env[key] = v
				}
			}
		}
		p.Services[name] = a
		changed = append(changed, name)
	}
	return changed
}
