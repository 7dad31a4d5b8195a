package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sync"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/server/api"
)

// exec --forward-agent (remote mode): the caller holds a session that
// serves its ssh-agent (OpAgent streams); the server asks the replica's
// companion for a socket in the app (an OpAgent stream on its relay that
// lives as long as the exec), sets SSH_AUTH_SOCK in the exec, and carries
// each connection to that socket from the companion to the caller's
// session.

// agents are the forwarded agents of running execs, by socket id.
type agents struct {
	mu sync.Mutex
	by map[string]agentRoute
}

type agentRoute struct {
	project string
	sess    *session
}

// maxAgents bounds the forwarded agents of one server at once.
const maxAgents = 1024

// forwardAgent sets up the agent socket of one exec in project's
// replica: it returns the exec's SSH_AUTH_SOCK and what ends it.
func (s *Server) forwardAgent(r execReplica, tenant, sessionID string) (string, func(), error) {
	switch {
	case s.mountsOnly:
		return "", nil, fmt.Errorf("%w: exec --forward-agent needs a caretaker companion next to the app to serve the agent's socket, and the %s backend's remote mode gives companions to client-local mounts and credentials only",
			errdefs.ErrNotImplemented, s.b.Name())
	case !s.remote && s.remoteVar == "":
		return "", nil, fmt.Errorf("%w: exec --forward-agent needs a remote-mode deployment: a caretaker companion next to the app serves the agent's socket, and the %s backend has no remote mode",
			errdefs.ErrNotImplemented, s.b.Name())
	case !s.remote:
		return "", nil, fmt.Errorf("%w: exec --forward-agent needs a remote-mode deployment (%s=1 on the server): a caretaker companion next to the app serves the agent's socket, and the %s backend here runs none",
			errdefs.ErrNotImplemented, s.remoteVar, s.b.Name())
	}
	sess, err := s.sessions.live(sessionID, tenant)
	if err != nil {
		return "", nil, fmt.Errorf("exec --forward-agent: the session serving your agent: %w", err)
	}
	idb := make([]byte, 16)
	_, _ = rand.Read(idb)
	id := hex.EncodeToString(idb)
	if err := s.agents.add(id, agentRoute{project: r.project, sess: sess}); err != nil {
		return "", nil, err
	}
	ctl, err := s.openToReplica(r.ctx, r.project, r.service, r.index, api.StreamHeader{Op: api.OpAgent, Agent: &api.AgentOpen{ID: id}}, nil)
	if err != nil {
		s.agents.remove(id)
		return "", nil, fmt.Errorf("exec --forward-agent: %w", err)
	}
	return caretaker.AgentSocket(id), func() {
		ctl.Close() // the companion removes the socket
		s.agents.remove(id)
	}, nil
}

func (as *agents) add(id string, r agentRoute) error {
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.by == nil {
		as.by = map[string]agentRoute{}
	}
	if len(as.by) >= maxAgents {
		return fmt.Errorf("%w: %d forwarded agents already", errdefs.ErrUnavailable, maxAgents)
	}
	as.by[id] = r
	return nil
}

func (as *agents) remove(id string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	delete(as.by, id)
}

func (as *agents) get(id string) (agentRoute, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	r, ok := as.by[id]
	return r, ok
}

// relayAgent carries one connection to a forwarded agent's socket from
// the companion to the caller's session; only a companion of the same
// project reaches it.
func (s *Server) relayAgent(project string, a api.AgentOpen, st net.Conn) {
	r, ok := s.agents.get(a.ID)
	if !ok || r.project != project {
		replyDial(st, fmt.Errorf("%w: no forwarded agent %q in project %s", errdefs.ErrNotFound, a.ID, project))
		return
	}
	conn, err := r.sess.openRelayed(api.StreamHeader{Op: api.OpAgent, Agent: &a}, st)
	bridge(st, conn, err)
}
