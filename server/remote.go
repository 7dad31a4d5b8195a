package server

import (
	"context"
	"fmt"
	"maps"
	"net"
	"sync"

	"github.com/containerd/errdefs"
	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// Remote mode: the backend's runtime shares neither this host's mounts
// nor its networks. A backend that has one (backends.FeatureRemoteMode)
// reads the variable that turns it on from the environ it was opened with
// and names it (CORNUS_DOCKER_REMOTE=1 for dockerhost, say; on kubernetes
// the companion is a native sidecar in the replica's pod). Every replica
// then gets a
// caretaker companion that dials back on the relay (server/relay.go) and
// does, next to the app, what the server does on its host otherwise: it
// mounts the client-local mounts (the server forwards its OpMount
// streams to the client's session), dials port-forwards and tunnels in
// the replica's network namespace (the server opens OpDial streams on its
// relay), and serves exec --forward-agent's socket (OpAgent).

// remoteMode is the backend's remote mode as the backend says: whether it
// is on and the variable that turns it on ("" when it has none).
func remoteMode(b backends.Backend) (on bool, variable string) {
	if rm, err := backends.Want[backends.RemoteModer](b, backends.FeatureRemoteMode, "remote mode"); err == nil {
		return rm.RemoteMode()
	}
	return false, ""
}

// setRemote records b's remote mode: on, its variable, and whether it
// moves only mounts and credentials next to the app.
func (s *Server) setRemote(b backends.Backend) {
	s.remote, s.remoteVar = remoteMode(b)
	if mo, ok := b.(backends.RemoteMountsOnly); ok {
		s.mountsOnly = mo.RemoteMountsOnly()
	}
	if sc, ok := b.(backends.SiblingCompanions); ok {
		s.siblings = s.remote && sc.SiblingCompanions()
	}
	s.remoteDial = s.remote && !s.mountsOnly
}

// checkRemote refuses a remote-mode deployment the companions could not
// dial back from.
func (s *Server) checkRemote() error {
	if s.cfg.AdvertiseURL == "" {
		return fmt.Errorf("%w: remote mode (%s=1) needs the URL companions dial back to: --advertise-url or %s on the server",
			errdefs.ErrFailedPrecondition, s.remoteVar, EnvAdvertiseURL)
	}
	return nil
}

// labelRemoteMounts records each app's client-local mounts on it for its
// companion (caretaker.LabelLocalMounts) and on the session, which serves
// only those; it returns a copy of p.
func (s *Server) labelRemoteMounts(sess *session, p spec.Project, lms []api.LocalMount) spec.Project {
	by := map[string][]caretaker.AppMount{}
	allowed := map[int]bool{}
	for _, lm := range lms {
		by[lm.Service] = append(by[lm.Service], caretaker.AppMount{Index: lm.Index, Target: lm.Target, ReadOnly: lm.ReadOnly, File: lm.File})
		allowed[lm.Index] = true
	}
	out := p
	out.Services = maps.Clone(p.Services)
	for name, ms := range by {
		a := out.Services[name]
		a.Labels = maps.Clone(a.Labels)
		if a.Labels == nil {
			a.Labels = map[string]string{}
		}
		a.Labels[caretaker.LabelLocalMounts] = caretaker.EncodeAppMounts(ms)
		out.Services[name] = a
	}
	sess.mountMu.Lock()
	sess.exports = allowed
	sess.mountMu.Unlock()
	return out
}

// refuseReservedLabels refuses a client's spec that sets a label only the
// server sets.
func refuseReservedLabels(p spec.Project) error {
	for _, name := range p.ServiceNames() {
		if _, ok := p.Services[name].Labels[caretaker.LabelLocalMounts]; ok {
			return fmt.Errorf("%w: services.%s.labels.%s: the server sets this label (client-local mounts come as --local-mount or Compose binds)",
				errdefs.ErrInvalidArgument, name, caretaker.LabelLocalMounts)
		}
	}
	return nil
}

// relays are the companions' relay connections, by replica: the server
// opens port-forward and agent streams on them.
type relays struct {
	mu sync.Mutex
	by map[replicaKey]peer
}

type replicaKey struct {
	project, service string
	replica          int
}

func (rs *relays) add(k replicaKey, p peer) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.by == nil {
		rs.by = map[replicaKey]peer{}
	}
	rs.by[k] = p
}

func (rs *relays) remove(k replicaKey, mux *yamux.Session) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.by[k].mux == mux {
		delete(rs.by, k)
	}
}

func (rs *relays) get(k replicaKey) (peer, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	p, ok := rs.by[k]
	return p, ok && !p.mux.IsClosed()
}

// openToReplica opens a stream on the companion of a running replica of
// service (by service or container name; index 1 when 0), for stream
// from, relayed there (openRelayed; nil: a stream of the server's own).
func (s *Server) openToReplica(ctx context.Context, project, service string, index int, h api.StreamHeader, from net.Conn) (net.Conn, error) {
	c, err := replica(ctx, s.e, project, service, index)
	if err != nil {
		return nil, err
	}
	p, ok := s.relays.get(replicaKey{project, c.App(), c.ReplicaNumber()})
	if !ok {
		return nil, fmt.Errorf("%w: %s has no caretaker companion connected (remote mode reaches replicas through it)", errdefs.ErrUnavailable, c.Name)
	}
	if h.Dial != nil {
		// Only the server names what a companion dials: the replica's
		// address for one beside it, else its own loopback.
		d := *h.Dial
		d.Host = ""
		if s.siblings {
			if d.Host, err = s.besideAddress(ctx, c); err != nil {
				return nil, err
			}
		}
		h.Dial = &d
	}
	return p.openRelayed(h, from)
}

// besideAddress is replica c's address on a network its companion,
// beside it, is on too (the app may have joined others since).
func (s *Server) besideAddress(ctx context.Context, c backends.Container) (string, error) {
	comp, err := s.b.Inspect(ctx, c.Name+engine.CompanionSuffix)
	if err != nil {
		return "", fmt.Errorf("%s's caretaker companion: %w", c.Name, err)
	}
	return address(ctx, s.b, c, func(n string) bool { _, ok := comp.Networks[n]; return ok })
}

// relayMount forwards a companion's OpMount stream to the client session
// of its project, for the exports that session made client-local mounts.
func (s *Server) relayMount(project string, m api.MountOpen, st net.Conn) {
	sess := s.sessions.provider(project)
	if sess == nil {
		replyDial(st, fmt.Errorf("%w: project %s has no client session to serve its client-local mounts", errdefs.ErrFailedPrecondition, project))
		return
	}
	sess.mountMu.Lock()
	ok := sess.exports[m.Index]
	sess.mountMu.Unlock()
	if !ok {
		replyDial(st, fmt.Errorf("%w: project %s has no client-local mount %d", errdefs.ErrNotFound, project, m.Index))
		return
	}
	conn, err := sess.openRelayed(api.StreamHeader{Op: api.OpMount, Mount: &m}, st)
	bridge(st, conn, err)
}
