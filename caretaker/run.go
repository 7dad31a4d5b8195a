package caretaker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/cornus-dev/cornus/caretaker/outbound"
	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// Run runs c's roles until ctx ends, then undoes what it set up.
func Run(ctx context.Context, c Config, token string, log *slog.Logger) error {
	transparent := c.Egress != nil && c.Egress.Mode == spec.EgressTransparent
	var dial func(context.Context, string, string) (net.Conn, error)
	if transparent {
		dial = outbound.MarkedDialer().DialContext
	} else {
		var d net.Dialer
		dial = d.DialContext
	}
	// The roles' goroutines end with ctx: cancel runs before the wait.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var relay *serverRelay
	if c.Server != "" {
		var err error
		if relay, err = newRelay(c, token, dial, transparent); err != nil {
			return err
		}
		defer relay.close()
	}
	if c.Remote {
		// The server opens port-forward and agent streams on the relay:
		// it is dialed now and kept up (again after a server restart).
		agents := &agentRole{ctx: ctx, dir: sharedPath(agentSubdir), relay: relay, log: log}
		relay.opts = client.RelayOptions{Service: c.Service, Replica: c.Replica, Handlers: map[string]client.Handler{
			api.OpDial:  dialHandler(ctx, dial, c.Sibling),
			api.OpAgent: agents.serve,
		}}
		if err := os.MkdirAll(agents.dir, 0o755); err != nil {
			return fmt.Errorf("caretaker: agent sockets: %w", err)
		}
		if _, err := relay.session(ctx); err != nil {
			return fmt.Errorf("caretaker: %w", err)
		}
		wg.Go(func() { relay.keep(ctx, log) })
	}
	if len(c.Mounts) > 0 {
		ms, err := mountAll(ctx, relay, c.Mounts, log)
		defer unmountAll(ms, log)
		if err != nil {
			return fmt.Errorf("caretaker: %w", err)
		}
	}
	if len(c.Credentials) > 0 {
		undo, err := runCredentials(ctx, &wg, c, relay, log)
		if err != nil {
			return err
		}
		defer undo()
	}
	if c.Docker {
		undo, err := runDocker(ctx, &wg, c, relay, log)
		if err != nil {
			return err
		}
		defer undo()
	}
	if c.Egress != nil {
		var opener outbound.Opener
		if relay != nil {
			opener = relay
		}
		undo, err := runEgress(ctx, &wg, c, opener, transparent, log)
		if undo != nil {
			defer undo()
		}
		if err != nil {
			return err
		}
	}
	ready, err := net.Listen("unix", ReadySocket)
	if err != nil {
		return fmt.Errorf("caretaker: ready socket: %w", err)
	}
	wg.Go(func() { answerReady(ready) })
	<-ctx.Done()
	ready.Close()
	return nil
}

// answerReady accepts and closes connections to the ready socket until it
// closes: a connection that opens tells the probe the roles are up.
func answerReady(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// newRelay is the caretaker's client of the server's relay, trusting
// serverCA if given and dialing as egress does when it is transparent.
func newRelay(c Config, token string, dial func(context.Context, string, string) (net.Conn, error), transparent bool) (*serverRelay, error) {
	cl, err := client.New(c.Server, token)
	if err != nil {
		return nil, fmt.Errorf("caretaker: %w", err)
	}
	if c.ServerCA != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(c.ServerCA)) {
			return nil, fmt.Errorf("caretaker: serverCA: no PEM certificate in it")
		}
		cl.SetTransport(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}})
	}
	if transparent {
		cl.SetDialContext(dial)
	}
	return &serverRelay{cl: cl, project: c.Project}, nil
}

// runEgress starts the egress role; undo removes the redirect.
func runEgress(ctx context.Context, wg *sync.WaitGroup, c Config, relay outbound.Opener, transparent bool, log *slog.Logger) (func(), error) {
	pol, err := egress.Compile(c.Egress, "egress", egress.PACOptions{})
	if err != nil {
		return nil, fmt.Errorf("caretaker: %w", err)
	}
	var dial func(context.Context, string, string) (net.Conn, error)
	if transparent {
		dial = outbound.MarkedDialer().DialContext
	}
	router := &outbound.Router{Service: c.Service, Replica: c.Replica, Policy: pol, Relay: relay, Dial: dial}
	proxy := &outbound.Proxy{Router: router, Log: log}
	var undo func()
	switch c.Egress.Mode {
	case spec.EgressProxy:
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ProxyPort))
		if err != nil {
			return nil, fmt.Errorf("caretaker: egress proxy: %w", err)
		}
		wg.Go(func() { _ = proxy.Serve(ctx, ln) })
	case spec.EgressTransparent:
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(RedirectPort))
		if err != nil {
			return nil, fmt.Errorf("caretaker: egress redirect listener: %w", err)
		}
		t := &outbound.Transparent{Router: router, Proxy: proxy}
		wg.Go(func() { _ = t.Serve(ctx, ln) })
		// IPv6 connections are redirected to ::1 (when the namespace
		// has IPv6 at all).
		if ln6, err := net.Listen("tcp", "[::1]:"+strconv.Itoa(RedirectPort)); err == nil {
			wg.Go(func() { _ = t.Serve(ctx, ln6) })
		}
		if err := redirect(log); err != nil {
			return nil, fmt.Errorf("caretaker: %w", err)
		}
		undo = func() {
			if err := outbound.Unredirect(); err != nil {
				log.Warn("remove the egress redirect", "error", err.Error())
			}
		}
	}
	log.Info("egress", "mode", c.Egress.Mode, "service", c.Service, "replica", c.Replica, "relay", c.Server != "")
	return undo, nil
}

// serverRelay is the companion's relay connection, opened on first use
// and again after it drops (a server restart).
type serverRelay struct {
	cl      *client.Client
	project string
	opts    client.RelayOptions
	mu      sync.Mutex
	sess    *client.Session
}

func (r *serverRelay) Open(ctx context.Context, h api.StreamHeader) (net.Conn, error) {
	return r.open(ctx, h, (*client.Session).Open)
}

// OpenEarly opens before the server's answer (client.Session.OpenEarly).
func (r *serverRelay) OpenEarly(ctx context.Context, h api.StreamHeader) (net.Conn, error) {
	return r.open(ctx, h, (*client.Session).OpenEarly)
}

func (r *serverRelay) open(ctx context.Context, h api.StreamHeader,
	open func(*client.Session, context.Context, api.StreamHeader) (net.Conn, error)) (net.Conn, error) {
	if r == nil {
		return nil, errors.New("no server to relay through (a local deployment)")
	}
	for try := 0; ; try++ {
		s, err := r.session(ctx)
		if err != nil {
			return nil, err
		}
		c, err := open(s, ctx, h)
		if err == nil || try == 1 || !s.Closed() {
			return c, err
		}
		r.drop(s)
	}
}

func (r *serverRelay) session(ctx context.Context) (*client.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil && !r.sess.Closed() {
		return r.sess, nil
	}
	s, err := r.cl.OpenRelayAs(ctx, r.project, r.opts)
	if err != nil {
		return nil, fmt.Errorf("relay to %s: %w", r.cl.URL(), err)
	}
	r.sess = s
	return s, nil
}

func (r *serverRelay) drop(s *client.Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == s {
		_ = s.Close()
		r.sess = nil
	}
}

func (r *serverRelay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		_ = r.sess.Close()
	}
}

// redirect installs transparent mode's redirect, skipping the caretaker's
// own sockets by their mark and their cgroup. Where the cgroup cannot be
// read or does not match (an older kernel), the mark alone tells them
// apart, which holds as long as the app may not mark its sockets (its
// CAP_NET_RAW and CAP_NET_ADMIN are dropped): that is logged.
func redirect(log *slog.Logger) error {
	owner, err := redirectOwned()
	if err == nil {
		log.Info("egress redirect", "skips", "the caretaker's marked sockets in its "+owner.String())
		return nil
	}
	log.Warn("egress redirect: the caretaker's sockets are told apart by their mark only", "why", err.Error())
	return outbound.Redirect(RedirectPort, nil)
}

// redirectOwned installs the redirect with the caretaker's cgroup and
// checks that it skips the caretaker's own sockets.
func redirectOwned() (outbound.Owner, error) {
	owner, err := outbound.SelfOwner()
	if err != nil {
		return owner, err
	}
	if err := outbound.Redirect(RedirectPort, &owner); err != nil {
		return owner, err
	}
	ok, err := outbound.Exempt()
	if err == nil && !ok {
		err = fmt.Errorf("its %s does not match its own sockets", owner)
	}
	return owner, err
}
