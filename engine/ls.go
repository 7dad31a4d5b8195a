package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// ProjectStatus is a project as compose ls lists it: its containers'
// states, counted.
type ProjectStatus struct {
	Name   string
	States map[string]int
	// ConfigFiles are the Compose files it was loaded from, as its
	// containers' label says (comma-separated; "" when none does).
	ConfigFiles string
}

// Status is docker compose ls's: each state with its count, by name
// ("exited(1), running(2)").
func (s ProjectStatus) Status() string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(s.States)) {
		parts = append(parts, fmt.Sprintf("%s(%d)", st, s.States[st]))
	}
	return strings.Join(parts, ", ")
}

// Running reports whether a container of the project runs.
func (s ProjectStatus) Running() bool { return s.States[string(backends.StateRunning)] > 0 }

// ProjectsOf counts cs (any projects' containers) by project, sorted by
// name; with all false, only the projects with a running container.
func ProjectsOf(cs []backends.Container, all bool) []ProjectStatus {
	byName := map[string]*ProjectStatus{}
	for _, c := range cs {
		name := c.Labels[backends.ComposeProject]
		if name == "" || c.Labels[LabelCompanionOf] != "" {
			continue
		}
		p := byName[name]
		if p == nil {
			p = &ProjectStatus{Name: name, States: map[string]int{}}
			byName[name] = p
		}
		p.States[string(c.State)]++
		if p.ConfigFiles == "" {
			p.ConfigFiles = c.Labels[backends.ComposeConfigFiles]
		}
	}
	out := []ProjectStatus{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if p := byName[name]; all || p.Running() {
			out = append(out, *p)
		}
	}
	return out
}

// Projects lists the projects with containers on the backend (compose
// ls): with all false, only those with a running container.
func (e *Engine) Projects(ctx context.Context, all bool) ([]ProjectStatus, error) {
	cs, err := e.b.List(ctx, backends.ListOptions{All: true})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	return ProjectsOf(cs, all), nil
}
