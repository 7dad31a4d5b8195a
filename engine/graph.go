package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// serviceRef returns the service named by a "service:NAME" mode.
func serviceRef(mode string) (string, bool) {
	return strings.CutPrefix(mode, "service:")
}

// dependencies are the services an app must follow: depends_on plus the
// implicit ones of network_mode/pid/ipc "service:NAME".
func dependencies(a spec.App) map[string]spec.Dependency {
	deps := map[string]spec.Dependency{}
	for name, d := range a.DependsOn {
		deps[name] = d
	}
	for _, mode := range []string{a.NetworkMode, a.PidMode, a.IpcMode} {
		if s, ok := serviceRef(mode); ok {
			if _, exists := deps[s]; !exists {
				deps[s] = spec.Dependency{Condition: spec.ConditionStarted}
			}
		}
	}
	return deps
}

// selectServices returns the named services plus, unless noDeps, every
// service they depend on (required or present). Empty names select all.
func selectServices(p spec.Project, names []string, noDeps bool) (map[string]bool, error) {
	sel := map[string]bool{}
	if len(names) == 0 {
		for n := range p.Services {
			sel[n] = true
		}
		return sel, nil
	}
	var add func(string) error
	add = func(n string) error {
		if sel[n] {
			return nil
		}
		if _, ok := p.Services[n]; !ok {
			return fmt.Errorf("no such service: %s (services: %s)", n, strings.Join(p.ServiceNames(), ", "))
		}
		sel[n] = true
		if noDeps {
			return nil
		}
		for d := range dependencies(p.Services[n]) {
			if _, ok := p.Services[d]; !ok {
				continue // an optional dependency that is not defined
			}
			if err := add(d); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range names {
		if err := add(n); err != nil {
			return nil, err
		}
	}
	return sel, nil
}

// reverseWaves orders services for teardown: each wave holds services no
// remaining service depends on, so dependents stop before what they use.
// deps maps a service to the services it depends on.
func reverseWaves(services []string, deps map[string][]string) [][]string {
	remaining := map[string]bool{}
	for _, s := range services {
		remaining[s] = true
	}
	var waves [][]string
	for len(remaining) > 0 {
		var wave []string
		for s := range remaining {
			used := false
			for other := range remaining {
				for _, d := range deps[other] {
					if d == s && other != s {
						used = true
					}
				}
			}
			if !used {
				wave = append(wave, s)
			}
		}
		if len(wave) == 0 { // a cycle (cannot come from a valid spec): stop the rest together
			for s := range remaining {
				wave = append(wave, s)
			}
		}
		sort.Strings(wave)
		for _, s := range wave {
			delete(remaining, s)
		}
		waves = append(waves, wave)
	}
	return waves
}

// Selected names the services Up applies for names (and, unless noDeps,
// what they depend on), in the project's order: what a client builds
// before it.
func Selected(p spec.Project, names []string, noDeps bool) ([]string, error) {
	sel, err := selectServices(p, names, noDeps)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(p.ServiceNames(), func(n string) bool { return !sel[n] }), nil
}
