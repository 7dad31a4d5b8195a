package server

import (
	"fmt"
	"net"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// recordRelayed records what a deployed p's caretakers may relay: its
// egress policies, its credentials' names and its docker endpoints.
func (s *Server) recordRelayed(p spec.Project) error {
	if err := s.policies.set(p); err != nil {
		return err
	}
	if err := s.credentials.set(p); err != nil {
		return err
	}
	return s.dockers.set(p)
}

// addGrants records what an up in progress lets its new companions ask
// for, beside what the running ones may.
func (s *Server) addGrants(p spec.Project) error {
	if err := s.credentials.add(p); err != nil {
		return err
	}
	return s.dockers.add(p)
}

// forgetRelayed forgets what a removed deployment's caretakers could
// relay.
func (s *Server) forgetRelayed(project string) {
	s.policies.forget(project)
	s.credentials.forget(project)
	s.dockers.forget(project)
	s.dockerEndpoints.close(project)
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
	if err := s.needRemote(names, "ask for credentials"); err != nil {
		return err
	}
	return s.needClient(sess, names, "ask for credentials minted by their client")
}

// needRemote refuses services whose role (what they ask for, for the
// message) the caretaker companions of remote mode serve, on a server
// without it.
func (s *Server) needRemote(services, what string) error {
	if s.remote && s.cfg.AdvertiseURL != "" {
		return nil
	}
	if s.remote {
		return fmt.Errorf("%w: services %s %s, which caretaker companions serve through this server, which has no advertise URL they can dial (--advertise-url or %s on the server)",
			errdefs.ErrFailedPrecondition, services, what, EnvAdvertiseURL)
	}
	hint := "this server's backend has no remote mode"
	if s.remoteVar != "" {
		hint = "set " + s.remoteVar + "=1 on the server"
	}
	return fmt.Errorf("%w: services %s %s, which the caretaker companions of remote mode serve (%s)", errdefs.ErrFailedPrecondition, services, what, hint)
}

// relayCredential carries a caretaker's request for a credential to its
// deployment's client, if the deployment declared it, and the answer
// back: bytes passed through, never read, kept or logged.
func (s *Server) relayCredential(project string, o api.CredentialOpen, st net.Conn) {
	if !s.credentials.allowed(project, o.Service, o.Name) {
		replyDial(st, fmt.Errorf("%w: service %s of project %s declares no credential %q", errdefs.ErrPermissionDenied, o.Service, project, o.Name))
		return
	}
	conn, err := s.sessions.openToClient(project, api.StreamHeader{Op: api.OpCredential, Credential: &o}, st)
	bridge(st, conn, err)
}
