package server

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// credentialGrants are the credentials each deployment's services may
// ask their client for (the caretaker's credential role): names only, as
// the deployment declared them. Kept across restarts, as the egress
// policies are; a credential itself is never kept (relayCredential).
type credentialGrants struct {
	dir string
	mu  sync.Mutex
	by  map[string]map[string][]string // project → service → names
}

func newCredentialGrants(dir string) *credentialGrants {
	return &credentialGrants{dir: dir, by: map[string]map[string][]string{}}
}

// set records p's declarations (none: forgets the project's).
func (g *credentialGrants) set(p spec.Project) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.write(p.Name, declared(p))
}

// add records p's declarations beside those recorded (an up in
// progress: the replicas it replaces still run).
func (g *credentialGrants) add(p spec.Project) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := declared(p)
	for svc, old := range g.load(p.Name) {
		for _, n := range old {
			if !slices.Contains(names[svc], n) {
				names[svc] = append(names[svc], n)
			}
		}
	}
	return g.write(p.Name, names)
}

func declared(p spec.Project) map[string][]string {
	names := map[string][]string{}
	for svc, a := range p.Services {
		for _, c := range a.Credentials {
			names[svc] = append(names[svc], c.Name)
		}
	}
	return names
}

// write records names for project (g.mu held).
func (g *credentialGrants) write(project string, names map[string][]string) error {
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
func (g *credentialGrants) load(project string) map[string][]string {
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

// allowed reports whether service of project declared credential name.
func (g *credentialGrants) allowed(project, service, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.load(project)[service], name)
}

func (g *credentialGrants) forget(project string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = g.write(project, nil)
}

func (g *credentialGrants) path(project string) string {
	return filepath.Join(g.dir, project+".json")
}

// recordRelayed records what a deployed p's caretakers may relay: its
// egress policies and its credentials' names.
func (s *Server) recordRelayed(p spec.Project) error {
	if err := s.policies.set(p); err != nil {
		return err
	}
	return s.credentials.set(p)
}

// forgetRelayed forgets what a removed deployment's caretakers could
// relay.
func (s *Server) forgetRelayed(project string) {
	s.policies.forget(project)
	s.credentials.forget(project)
}

// checkCredentials refuses a deployment whose credentials nothing could
// mint or deliver: they are minted by its client, over its session, and
// delivered by the caretaker companions of remote mode.
func (s *Server) checkCredentials(p spec.Project, sess *session) error {
	with := p.ServicesWithCredentials()
	if len(with) == 0 {
		return nil
	}
	names := strings.Join(with, ", ")
	if !s.remote {
		hint := "this server's backend has no remote mode"
		if s.remoteVar != "" {
			hint = "set " + s.remoteVar + "=1 on the server"
		}
		return fmt.Errorf("%w: services %s ask for credentials, which the caretaker companions of remote mode deliver (%s)", errdefs.ErrFailedPrecondition, names, hint)
	}
	return s.needClient(sess, names, "ask for credentials minted by their client")
}

// relayCredential carries a caretaker's request for a credential to its
// deployment's client, if the deployment declared it, and the answer
// back: bytes passed through, never read, kept or logged.
func (s *Server) relayCredential(project string, o api.CredentialOpen, st net.Conn) {
	if !s.credentials.allowed(project, o.Service, o.Name) {
		replyDial(st, fmt.Errorf("%w: service %s of project %s declares no credential %q", errdefs.ErrPermissionDenied, o.Service, project, o.Name))
		return
	}
	conn, err := s.sessions.openToClient(project, api.StreamHeader{Op: api.OpCredential, Credential: &o})
	bridge(st, conn, err)
}
