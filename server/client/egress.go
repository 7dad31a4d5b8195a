package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/net/http/httpproxy"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/egress/netguard"
	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
)

// EgressHandler serves the server's egress streams: the last hop of a
// workload's connection that leaves from this machine. It decides again
// with the client's own copy of each service's policy (a server cannot
// make the client dial what the client's policy does not send to it),
// then dials through this machine's proxy settings (HTTPS_PROXY,
// NO_PROXY; where those are unset, macOS's or Windows' system proxy), as
// the developer's own programs would, but never this
// machine's own network (loopback, link-local, its own addresses: the
// developer's services) unless the deciding rule names the destination
// (pattern 127.0.0.1:8080 or localhost:5432, not *).
func EgressHandler(policies map[string]*egress.Policy, environ []string) Handler {
	proxies := proxyConfig(environ)
	return egressHandler(policies, func(ctx context.Context, d egress.Destination, dec egress.Decision) (net.Conn, error) {
		return dialVia(ctx, proxies, d, dec.Explicit)
	})
}

// EgressHandlerDialing is EgressHandler connecting with dial (tests dial
// their own targets, never a destination's real address).
func EgressHandlerDialing(policies map[string]*egress.Policy, dial func(ctx context.Context, hostport string) (net.Conn, error)) Handler {
	return egressHandler(policies, func(ctx context.Context, d egress.Destination, _ egress.Decision) (net.Conn, error) {
		return dial(ctx, d.String())
	})
}

func egressHandler(policies map[string]*egress.Policy, dial func(context.Context, egress.Destination, egress.Decision) (net.Conn, error)) Handler {
	return func(h api.StreamHeader, st net.Conn) {
		defer st.Close()
		e := h.Egress
		if e == nil {
			Reply(st, fmt.Errorf("%w: egress stream without a destination", errdefs.ErrInvalidArgument))
			return
		}
		pol := policies[e.Service]
		d, err := egress.ParseDestination(e.Dest)
		if err != nil || pol == nil {
			Reply(st, fmt.Errorf("%w: egress of service %q to %q: no policy here or a bad destination", errdefs.ErrPermissionDenied, e.Service, e.Dest))
			return
		}
		dec := pol.Decide(d)
		if dec.Route != egress.Client {
			Reply(st, fmt.Errorf("%w: egress to %s: this client's policy says %s (%s), not client", errdefs.ErrPermissionDenied, d, dec.Route, dec.By))
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		conn, err := dial(ctx, d, dec)
		cancel()
		var refused *netguard.RefusedError
		switch {
		case errors.As(err, &refused):
			Reply(st, fmt.Errorf("egress to %s from the client (%s): %w: the client dials its own network only for a rule that names the destination (pattern %s)", d, dec.By, err, d))
			return
		case err != nil:
			Reply(st, fmt.Errorf("%w: egress to %s from the client: %v", errdefs.ErrUnavailable, d, err))
			return
		}
		defer conn.Close()
		Reply(st, nil)
		streamcopy.Pipe(st, conn)
	}
}

// proxyConfig is the environment's proxy settings, else the system's.
func proxyConfig(environ []string) *httpproxy.Config {
	cfg := envProxyConfig(environ)
	if cfg.HTTPProxy != "" || cfg.HTTPSProxy != "" {
		return cfg
	}
	if sys := systemProxy(); sys.cfg != nil {
		return sys.cfg
	}
	return cfg
}

// envProxyConfig is the proxy the environment names (HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY, either case).
func envProxyConfig(environ []string) *httpproxy.Config {
	get := func(k string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	first := func(ks ...string) string {
		for _, k := range ks {
			if v := get(k); v != "" {
				return v
			}
		}
		return ""
	}
	return &httpproxy.Config{
		HTTPProxy:  first("HTTP_PROXY", "http_proxy"),
		HTTPSProxy: first("HTTPS_PROXY", "https_proxy"),
		NoProxy:    first("NO_PROXY", "no_proxy"),
	}
}

// ProxyNote is what to tell the developer about the proxy the egress end
// will use, or "": said when the environment names no proxy and the
// system's settings name a PAC file, which the egress end does not run.
// The system's settings are read once here (on macOS that runs scutil).
func ProxyNote(environ []string) string {
	if cfg := envProxyConfig(environ); cfg.HTTPProxy != "" || cfg.HTTPSProxy != "" {
		return ""
	}
	return systemProxy().note()
}

// dialVia connects to d directly, or through the HTTPS proxy the
// environment names for it (HTTP CONNECT), honoring NO_PROXY. A direct
// dial goes to the addresses netguard checked; through a proxy, which
// resolves the name itself, d is checked as this machine resolves it,
// when it does. explicit: the policy named d, own network included.
func dialVia(ctx context.Context, cfg *httpproxy.Config, d egress.Destination, explicit bool) (net.Conn, error) {
	guard := netguard.Guard{}
	if explicit {
		guard.Allowed = func(netip.Addr) bool { return true }
	}
	hostport := d.String()
	target := &url.URL{Scheme: "https", Host: hostport}
	proxy, err := cfg.ProxyFunc()(target)
	if err != nil || proxy == nil {
		return guard.Dial(ctx, d)
	}
	var refused *netguard.RefusedError
	if _, err := guard.Check(ctx, d.Host); errors.As(err, &refused) {
		return nil, err
	}
	var dl net.Dialer
	conn, err := dl.DialContext(ctx, "tcp", proxy.Host)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", proxy.Host, err)
	}
	if end, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(end)
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: hostport}, Host: hostport, Header: http.Header{}}
	if u := proxy.User; u != nil {
		p, _ := u.Password()
		req.SetBasicAuth(u.Username(), p)
		req.Header.Set("Proxy-Authorization", req.Header.Get("Authorization"))
		req.Header.Del("Authorization")
	}
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("proxy %s: %w", proxy.Host, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("proxy %s refused CONNECT %s: %s", proxy.Host, hostport, resp.Status)
	}
	_ = conn.SetDeadline(time.Time{})
	return &api.BufferedConn{Conn: conn, R: br}, nil
}
