package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/egress/netguard"
	"github.com/cornus-dev/cornus/egress/sandbox"
	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/muxconn"
	"github.com/cornus-dev/cornus/spec"
)

// EnvEgressGateway lets this server carry the gateway route itself.
const EnvEgressGateway = "CORNUS_EGRESS_GATEWAY"

// EnvEgressGatewayAllow lists the CIDRs or addresses (comma-separated)
// the gateway route may reach although they are this server's own
// network: loopback, link-local (the cloud metadata service), unspecified
// and the server's own addresses, which it refuses otherwise.
const EnvEgressGatewayAllow = "CORNUS_EGRESS_GATEWAY_ALLOW"

// policies are the egress policies of the deployments, by project and
// service, as the server last applied them (kept across restarts: a
// detached deployment's caretaker may relay after one).
type policies struct {
	dir string
	// pac compiles and runs the tenants' PAC scripts in a child process:
	// a script that crashes its runtime must not take the server down.
	pac *sandbox.Sandbox
	mu  sync.Mutex
	by  map[string]map[string]*egress.Policy
}

func newPolicies(dir string) *policies {
	return &policies{dir: dir, pac: sandbox.New(sandbox.Options{}), by: map[string]map[string]*egress.Policy{}}
}

// set records p's policies (nil policies: none).
func (ps *policies) set(p spec.Project) error {
	blocks := map[string]*spec.Egress{}
	for name, a := range p.Services {
		if a.Egress != nil {
			blocks[name] = a.Egress
		}
	}
	compiled, err := ps.compileAll(blocks)
	if err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.by[p.Name] = compiled
	if len(blocks) == 0 {
		_ = os.Remove(ps.path(p.Name))
		return nil
	}
	return writeFileAtomic(ps.path(p.Name), blocks)
}

func (ps *policies) compileAll(blocks map[string]*spec.Egress) (map[string]*egress.Policy, error) {
	out := map[string]*egress.Policy{}
	for name, e := range blocks {
		pol, err := egress.Compile(e, "services."+name+".egress", egress.PACOptions{Runner: ps.pac})
		if err != nil {
			return nil, err
		}
		out[name] = pol
	}
	return out, nil
}

func (ps *policies) path(project string) string { return filepath.Join(ps.dir, project+".json") }

// get is service's policy in project (nil: none, everything cluster).
func (ps *policies) get(project, service string) (*egress.Policy, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	byService, ok := ps.by[project]
	if !ok {
		data, err := boundedfile.Read(ps.path(project), boundedfile.ServerState)
		if err != nil {
			return nil, nil
		}
		var blocks map[string]*spec.Egress
		if err := json.Unmarshal(data, &blocks); err != nil {
			return nil, fmt.Errorf("egress policies of %s: %w", project, err)
		}
		if byService, err = ps.compileAll(blocks); err != nil {
			return nil, err
		}
		ps.by[project] = byService
	}
	return byService[service], nil
}

func (ps *policies) forget(project string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.by, project)
	_ = os.Remove(ps.path(project))
}

// relay is GET /v1/relay/{project}: the connection a deployment's
// caretaker companion dials back on (its caretaker token only), carrying
// its relayed streams.
func (s *Server) relay(w http.ResponseWriter, r *http.Request, id identity) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	api.OfferEarly(w.Header()) // serveRelayStream keeps what follows a header
	c, err := muxconn.Accept(ctx, w, r)
	if err != nil {
		return // Accept answered
	}
	mux, err := yamux.Server(c, muxConfig())
	if err != nil {
		_ = c.Close()
		return
	}
	defer mux.Close()
	defer s.live.add(id, "", func() { mux.Close() })()
	g := *id.caretaker
	project := g.Project
	// A companion of a remote-mode replica names it: the server opens its
	// port-forward and agent streams on this connection. (The token is
	// the deployment's: a companion can speak for any replica of its own
	// deployment, no other.)
	if svc := r.URL.Query().Get("service"); svc != "" {
		n, err := strconv.Atoi(r.URL.Query().Get("replica"))
		if err == nil && n >= 0 && len(svc) <= 256 {
			k := replicaKey{project, svc, n}
			s.relays.add(k, peer{mux, api.TakesEarly(r.Header)})
			defer s.relays.remove(k, mux)
		}
	}
	serveStreams(mux, func(st *yamux.Stream) {
		// The deployment's generation is checked for every stream:
		// the relay outlives a down only until the watcher sees it.
		if !s.owners.holds(g) {
			replyDial(st, fmt.Errorf("%w: this caretaker token's deployment has ended", errdefs.ErrPermissionDenied))
			st.Close()
			return
		}
		s.serveRelayStream(ctx, g, st)
	})
}

func (s *Server) serveRelayStream(ctx context.Context, g grant, st net.Conn) {
	defer st.Close()
	project := g.Project
	h, st, err := readHeader(st)
	if err != nil {
		replyDial(st, err)
		return
	}
	switch {
	case h.Op == api.OpEgress && h.Egress != nil:
		s.relayEgress(ctx, project, *h.Egress, st)
	case h.Op == api.OpMount && h.Mount != nil:
		s.relayMount(project, *h.Mount, st)
	case h.Op == api.OpAgent && h.Agent != nil:
		s.relayAgent(project, *h.Agent, st)
	case h.Op == api.OpCredential && h.Credential != nil:
		s.relayCredential(project, *h.Credential, st)
	case h.Op == api.OpDocker && h.Docker != nil:
		s.relayDocker(ctx, g, *h.Docker, st)
	default:
		replyDial(st, fmt.Errorf("%w: a caretaker relays egress, mount, agent, credential and docker streams, not %q", errdefs.ErrInvalidArgument, h.Op))
	}
}

// relayEgress re-checks a caretaker's egress with the server's copy of
// the policy and acts on the server's decision, never the claim: a lying
// caretaker cannot upgrade its route.
func (s *Server) relayEgress(ctx context.Context, project string, e api.EgressOpen, st net.Conn) {
	d, err := egress.ParseDestination(e.Dest)
	if err != nil {
		replyDial(st, fmt.Errorf("%w: %v", errdefs.ErrInvalidArgument, err))
		return
	}
	pol, err := s.policies.get(project, e.Service)
	if err != nil {
		replyDial(st, err)
		return
	}
	route := egress.Cluster
	by := "no policy"
	if pol != nil {
		dec := pol.Decide(d)
		route, by = dec.Route, dec.By
	}
	if route != e.Route {
		s.log.Warn("egress route disagreement: acting on the server's", "project", project, "service", e.Service,
			"dest", d.String(), "claimed", e.Route, "server", route)
	}
	var conn net.Conn
	switch route {
	case egress.Client:
		conn, err = s.sessions.openToClient(project, api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{
			Service: e.Service, Replica: e.Replica, Dest: d.String(), Route: route}}, st)
	case egress.Gateway:
		if envlist.Get(s.cfg.Environ, EnvEgressGateway) != "1" {
			err = fmt.Errorf("%w: egress to %s: route gateway (%s), and this server is no gateway (%s=1 makes it one)", errdefs.ErrPermissionDenied, d, by, EnvEgressGateway)
			break
		}
		conn, err = s.dialGateway(ctx, d, by)
	case egress.Cluster:
		err = fmt.Errorf("%w: egress to %s: route cluster (%s): dial it directly, not through the server", errdefs.ErrFailedPrecondition, d, by)
	default:
		err = fmt.Errorf("%w: egress to %s: denied (%s)", errdefs.ErrPermissionDenied, d, by)
	}
	bridge(st, conn, err)
}

// bridge answers a relayed stream st with how opening its far end went
// and, once open, carries the bytes both ways until both are done. A far
// end opened early (passing) answers st itself: its answer is the first
// line it sends.
func bridge(st, far net.Conn, err error) {
	if err != nil {
		replyDial(st, err)
		return
	}
	defer far.Close()
	if p, ok := far.(passing); ok {
		far = p.Conn
	} else {
		replyDial(st, nil)
	}
	streamcopy.Pipe(st, far)
}

// passing is a stream opened early to a session's client, its answer
// unread: relayed, the answer passes to the stream's opener.
type passing struct{ net.Conn }

// peer is the far end of a client's session or a companion's relay
// connection: the server opens streams on its mux.
type peer struct {
	mux *yamux.Session
	// early: the peer keeps bytes sent behind a stream's header
	// (api.HeaderEarlyData).
	early bool
}

// openRelayed opens a stream carrying h to p for stream from, relayed
// there (bridge): early where p keeps what follows a header, what from's
// opener sent behind its own header going on with h in one frame, p's
// answer passed through; else (or with no from) answered first.
func (p peer) openRelayed(h api.StreamHeader, from net.Conn) (net.Conn, error) {
	if !p.early || from == nil {
		return openStream(p.mux, h)
	}
	st, err := p.mux.OpenStream()
	if err != nil {
		return nil, err
	}
	if _, err := st.Write(append(api.HeaderLine(h), api.TakeEarly(from)...)); err != nil {
		st.Close()
		return nil, err
	}
	return passing{st}, nil
}

// dialGateway connects to d for the gateway route: the addresses its name
// resolves to, each checked, none on this server's own network unless
// CORNUS_EGRESS_GATEWAY_ALLOW allows it (a tenant's policy must not make
// the server dial its own loopback).
func (s *Server) dialGateway(ctx context.Context, d egress.Destination, by string) (net.Conn, error) {
	allow, err := netguard.ParseAllow(envlist.Get(s.cfg.Environ, EnvEgressGatewayAllow))
	if err != nil {
		return nil, fmt.Errorf("%w: egress to %s: route gateway: %s: %v", errdefs.ErrFailedPrecondition, d, EnvEgressGatewayAllow, err)
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := netguard.Guard{Allowed: netguard.In(allow)}.Dial(dctx, d)
	var refused *netguard.RefusedError
	if errors.As(err, &refused) {
		return nil, fmt.Errorf("egress to %s: route gateway (%s): %w: the gateway reaches none of this server's own network unless %s=%s allows it",
			d, by, err, EnvEgressGatewayAllow, netip.PrefixFrom(refused.Addr, refused.Addr.BitLen()))
	}
	return conn, err
}

// readHeader reads a stream's opening line; the stream it returns reads
// what followed the line first.
func readHeader(st net.Conn) (api.StreamHeader, net.Conn, error) { return api.ReadHeader(st) }

// openStream opens a stream on mux with h and waits for the answer.
func openStream(mux *yamux.Session, h api.StreamHeader) (net.Conn, error) {
	st, err := mux.OpenStream()
	if err != nil {
		return nil, err
	}
	return api.OpenStream(st, h, 20*time.Second)
}
