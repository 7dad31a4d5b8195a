package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/dockerapi"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// The docker role: a replica whose service asks for it (docker: true)
// gets a Docker socket from its caretaker; every connection to it is a
// relay stream (OpDocker) on the deployment's caretaker token, which this
// server answers with the Engine API (dockerapi) over the deployment's
// tenant's view of the backend (scoped): stock docker and docker compose
// in the workload deploy siblings on this server, as that tenant, under
// this host's policy. The token never reaches the app: the caretaker
// holds it.

// dockerEndpoints are the Engine APIs of the live deployments with the
// docker role, one per project (its containers' auto-remove and exec
// state outlive one connection).
type dockerEndpoints struct {
	mu sync.Mutex
	by map[string]*dockerEndpoint
}

type dockerEndpoint struct {
	epoch  string
	ln     *streamListener
	cancel context.CancelFunc
}

func newDockerEndpoints() *dockerEndpoints {
	return &dockerEndpoints{by: map[string]*dockerEndpoint{}}
}

// get is the endpoint of deployment g, started on first use.
func (d *dockerEndpoints) get(s *Server, g grant) *dockerEndpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ep, ok := d.by[g.Project]; ok && ep.epoch == g.Epoch {
		return ep
	} else if ok {
		ep.stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ep := &dockerEndpoint{epoch: g.Epoch, ln: newStreamListener(), cancel: cancel}
	eng := dockerapi.New(&scoped{s: s, b: s.b, tenant: g.Tenant, project: g.Project},
		dockerapi.WithPolicy(s.hostPolicy), dockerapi.WithReadCache(false))
	go func() {
		if err := eng.Serve(ctx, ep.ln); err != nil && !errors.Is(err, net.ErrClosed) {
			s.log.Warn("docker endpoint ended", "project", g.Project, "err", err)
		}
	}()
	d.by[g.Project] = ep
	return ep
}

// close stops project's endpoint (its deployment is gone).
func (d *dockerEndpoints) close(project string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ep, ok := d.by[project]; ok {
		ep.stop()
		delete(d.by, project)
	}
}

func (ep *dockerEndpoint) stop() {
	ep.cancel()
	_ = ep.ln.Close()
}

// relayDocker serves one connection of a caretaker's docker socket, if
// the deployment gave its service the docker role.
func (s *Server) relayDocker(ctx context.Context, g grant, o api.DockerOpen, st net.Conn) {
	if !s.dockers.allowed(g.Project, o.Service, grantDocker) {
		replyDial(st, fmt.Errorf("%w: service %s of project %s has no docker endpoint (docker: true)", errdefs.ErrPermissionDenied, o.Service, g.Project))
		return
	}
	ep := s.dockerEndpoints.get(s, g)
	replyDial(st, nil)
	c := newServedConn(st)
	if !ep.ln.push(c) {
		return
	}
	select {
	case <-c.done:
	case <-ctx.Done():
	}
}

// checkDocker refuses a deployment whose docker endpoints no companion
// could serve.
func (s *Server) checkDocker(p spec.Project) error {
	with := p.ServicesWithDocker()
	if len(with) == 0 {
		return nil
	}
	return s.needRemote(strings.Join(with, ", "), "ask for a docker endpoint")
}

// streamListener hands relay streams to an http.Server as connections.
type streamListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newStreamListener() *streamListener {
	return &streamListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// push hands c to the server; false once the listener is closed.
func (l *streamListener) push(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.closed:
		return false
	}
}

func (l *streamListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *streamListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *streamListener) Addr() net.Addr { return streamAddr{} }

type streamAddr struct{}

func (streamAddr) Network() string { return "relay" }
func (streamAddr) String() string  { return "caretaker-relay" }

// servedConn reports when the server is done with a stream (it closed it).
type servedConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func newServedConn(c net.Conn) *servedConn { return &servedConn{Conn: c, done: make(chan struct{})} }

func (c *servedConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}
