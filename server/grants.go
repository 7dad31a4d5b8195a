package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/spec"
)

// serviceGrants are what each deployment's services may ask for through
// their caretaker, as the deployment declared it: the credentials' names
// (the credential role: a credential itself is never kept, see
// relayCredential), or the docker endpoint. Kept across restarts, as
// the egress policies are.
type serviceGrants struct {
	dir     string
	declare func(spec.Project) map[string][]string // service → names
	mu      sync.Mutex
	by      map[string]map[string][]string // project → service → names
}

func newServiceGrants(dir string, declare func(spec.Project) map[string][]string) *serviceGrants {
	return &serviceGrants{dir: dir, declare: declare, by: map[string]map[string][]string{}}
}

// set records p's declarations (none: forgets the project's).
func (g *serviceGrants) set(p spec.Project) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.write(p.Name, g.declare(p))
}

// add records p's declarations beside those recorded (an up in
// progress: the replicas it replaces still run).
func (g *serviceGrants) add(p spec.Project) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := g.declare(p)
	for svc, old := range g.load(p.Name) {
		for _, n := range old {
			if !slices.Contains(names[svc], n) {
				names[svc] = append(names[svc], n)
			}
		}
	}
	return g.write(p.Name, names)
}

// declaredCredentials are the names of the credentials of p's services.
func declaredCredentials(p spec.Project) map[string][]string {
	names := map[string][]string{}
	for svc, a := range p.Services {
		for _, c := range a.Credentials {
			names[svc] = append(names[svc], c.Name)
		}
	}
	return names
}

// grantDocker is the one name of the docker role's grant.
const grantDocker = "docker"

// declaredDocker are p's services with the docker endpoint.
func declaredDocker(p spec.Project) map[string][]string {
	names := map[string][]string{}
	for _, svc := range p.ServicesWithDocker() {
		names[svc] = []string{grantDocker}
	}
	return names
}

// write records names for project (g.mu held).
func (g *serviceGrants) write(project string, names map[string][]string) error {
	if len(names) == 0 {
		delete(g.by, project)
		_ = os.Remove(g.path(project))
		return nil
	}
	g.by[project] = names
	return writeFileAtomic(g.path(project), names)
}

// load is project's record (g.mu held): remembered, else read back (a
// restarted server).
func (g *serviceGrants) load(project string) map[string][]string {
	names, ok := g.by[project]
	if !ok {
		data, err := boundedfile.Read(g.path(project), boundedfile.ServerState)
		if err != nil || json.Unmarshal(data, &names) != nil {
			return nil
		}
		g.by[project] = names
	}
	return names
}

// allowed reports whether service of project declared name.
func (g *serviceGrants) allowed(project, service, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.load(project)[service], name)
}

func (g *serviceGrants) forget(project string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = g.write(project, nil)
}

func (g *serviceGrants) path(project string) string {
	return filepath.Join(g.dir, project+".json")
}
