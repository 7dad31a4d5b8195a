package client

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/net/http/httpproxy"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
)

// EgressHandler serves the server's egress streams: the last hop of a
// workload's connection that leaves from this machine. It decides again
// with the client's own copy of each service's policy (a server cannot
// make the client dial what the client's policy does not send to it),
// then dials through this machine's proxy settings (HTTPS_PROXY,
// NO_PROXY), as the developer's own programs would.
func EgressHandler(policies map[string]*egress.Policy, environ []string) Handler {
	proxies := proxyConfig(environ)
	return EgressHandlerDialing(policies, func(ctx context.Context, hostport string) (net.Conn, error) {
		return dialVia(ctx, proxies, hostport)
	})
}

// EgressHandlerDialing is EgressHandler connecting with dial (tests dial
// their own targets, never a destination's real address).
func EgressHandlerDialing(policies map[string]*egress.Policy, dial func(ctx context.Context, hostport string) (net.Conn, error)) Handler {
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
		if dec := pol.Decide(d); dec.Route != egress.Client {
			Reply(st, fmt.Errorf("%w: egress to %s: this client's policy says %s (%s), not client", errdefs.ErrPermissionDenied, d, dec.Route, dec.By))
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		conn, err := dial(ctx, d.String())
		cancel()
		if err != nil {
			Reply(st, fmt.Errorf("%w: egress to %s from the client: %v", errdefs.ErrUnavailable, d, err))
			return
		}
		defer conn.Close()
		Reply(st, nil)
		Pipe(st, conn)
	}
}

func proxyConfig(environ []string) *httpproxy.Config {
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

// dialVia connects to hostport directly, or through the HTTPS proxy the
// environment names for it (HTTP CONNECT), honoring NO_PROXY.
func dialVia(ctx context.Context, cfg *httpproxy.Config, hostport string) (net.Conn, error) {
	target := &url.URL{Scheme: "https", Host: hostport}
	proxy, err := cfg.ProxyFunc()(target)
	var d net.Dialer
	if err != nil || proxy == nil {
		return d.DialContext(ctx, "tcp", hostport)
	}
	conn, err := d.DialContext(ctx, "tcp", proxy.Host)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", proxy.Host, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
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
