package outbound

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/net/proxy"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// fakeRelay stands for the server hop: it records what it was asked and
// dials the destination itself (what the client at the end would do).
type fakeRelay struct {
	opened atomic.Int32
	last   atomic.Value // api.EgressOpen
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (f *fakeRelay) Open(ctx context.Context, h api.StreamHeader) (net.Conn, error) {
	f.opened.Add(1)
	f.last.Store(*h.Egress)
	if f.dial != nil {
		return f.dial(ctx, "tcp", h.Egress.Dest)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", h.Egress.Dest)
}

// OpenEarly is Open: the fake has no answer to wait for.
func (f *fakeRelay) OpenEarly(ctx context.Context, h api.StreamHeader) (net.Conn, error) {
	return f.Open(ctx, h)
}

func policy(t *testing.T, e spec.Egress) *egress.Policy {
	t.Helper()
	p, err := egress.Compile(&e, "test", egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startProxy serves proxy mode on 127.0.0.1 for r.
func startProxy(t *testing.T, r *Router) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = (&Proxy{Router: r}).Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

func target(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func httpVia(t *testing.T, proxyAddr, target string) (int, string) {
	t.Helper()
	pu, _ := url.Parse("http://" + proxyAddr)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://" + target + "/x")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// connectVia tunnels through the proxy with CONNECT and sends one HTTP
// request inside the tunnel.
func connectVia(t *testing.T, proxyAddr, target string) (string, string) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.Status, string(b)
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.0\r\nHost: %s\r\n\r\n", target)
	b, _ := io.ReadAll(br)
	return resp.Status, string(b)
}

func TestProxyRoutes(t *testing.T) {
	tgt := target(t)
	relay := &fakeRelay{}
	for _, tc := range []struct {
		route     string
		wantCode  int
		wantRelay bool
	}{
		{egress.Cluster, 200, false},
		{egress.Client, 200, true},
		{egress.Gateway, 200, true},
		{egress.Deny, 403, false},
	} {
		t.Run(tc.route, func(t *testing.T) {
			r := &Router{Service: "web", Replica: 2, Relay: relay,
				Policy: policy(t, spec.Egress{Mode: spec.EgressProxy, Rules: []spec.EgressRule{{Pattern: "127.0.0.1", Route: tc.route}}, Default: egress.Deny})}
			addr := startProxy(t, r)
			before := relay.opened.Load()
			code, body := httpVia(t, addr, tgt)
			if code != tc.wantCode {
				t.Fatalf("GET via proxy: %d %s", code, body)
			}
			if tc.wantCode == 200 && body != "hello from /x" {
				t.Fatalf("body %q", body)
			}
			if tc.wantCode == 403 && !strings.Contains(body, "denied (rules[0] 127.0.0.1)") {
				t.Fatalf("refusal does not say why: %q", body)
			}
			status, body := connectVia(t, addr, tgt)
			if tc.wantCode == 200 && (status != "200 Connection established" || !strings.Contains(body, "hello from /tunnel")) {
				t.Fatalf("CONNECT: %s %q", status, body)
			}
			if tc.wantCode == 403 && !strings.HasPrefix(status, "403") {
				t.Fatalf("CONNECT of a denied destination: %s", status)
			}
			if relayed := relay.opened.Load() > before; relayed != tc.wantRelay {
				t.Fatalf("relayed = %v, want %v", relayed, tc.wantRelay)
			}
			if tc.wantRelay {
				got := relay.last.Load().(api.EgressOpen)
				if got.Service != "web" || got.Replica != 2 || got.Route != tc.route || got.Dest != tgt {
					t.Fatalf("relay header %+v", got)
				}
			}
		})
	}
}

func TestSOCKS5(t *testing.T) {
	tgt := target(t)
	r := &Router{Service: "web", Policy: policy(t, spec.Egress{Mode: spec.EgressProxy,
		Rules: []spec.EgressRule{{Pattern: "localhost", Route: egress.Cluster}, {Pattern: "blocked.test", Route: egress.Deny}}, Default: egress.Cluster})}
	addr := startProxy(t, r)
	d, err := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(tgt)
	for _, dest := range []string{tgt, "localhost:" + port} {
		c, err := d.Dial("tcp", dest)
		if err != nil {
			t.Fatalf("SOCKS5 to %s: %v", dest, err)
		}
		fmt.Fprintf(c, "GET /socks HTTP/1.0\r\nHost: x\r\n\r\n")
		b, _ := io.ReadAll(c)
		c.Close()
		if !strings.Contains(string(b), "hello from /socks") {
			t.Fatalf("SOCKS5 to %s: %q", dest, b)
		}
	}
	if _, err := d.Dial("tcp", "blocked.test:443"); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("SOCKS5 to a denied destination: %v", err)
	}
}

// A request head without end is refused once it passes the bound; the
// proxy does not buffer it.
func TestProxyBoundsTheHead(t *testing.T) {
	addr := startProxy(t, &Router{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		_, _ = io.WriteString(c, "GET http://127.0.0.1:1/ HTTP/1.1\r\n")
		line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
		for range 200 {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("oversized head: %s", resp.Status)
	}
}

// answeringRelay stands for the server hop as the real one answers: each
// stream a header and an answer line (refusing one destination), opened
// early where asked; it counts the early opens.
type answeringRelay struct {
	refuse string
	early  atomic.Int32
}

func (f *answeringRelay) open(h api.StreamHeader, early bool) (net.Conn, error) {
	opener, peer := net.Pipe()
	go func() {
		defer peer.Close()
		h, st, err := api.ReadHeader(peer)
		if err != nil {
			return
		}
		if h.Egress.Dest == f.refuse {
			api.Reply(st, fmt.Errorf("%w: the server says no", errdefs.ErrPermissionDenied))
			return
		}
		var d net.Dialer
		up, err := d.Dial("tcp", h.Egress.Dest)
		if err != nil {
			api.Reply(st, err)
			return
		}
		defer up.Close()
		api.Reply(st, nil)
		streamcopy.Pipe(st, up)
	}()
	if early {
		f.early.Add(1)
		return api.OpenEarly(opener, h, 10*time.Second)
	}
	return api.OpenStream(opener, h, 10*time.Second)
}

func (f *answeringRelay) Open(_ context.Context, h api.StreamHeader) (net.Conn, error) {
	return f.open(h, false)
}

func (f *answeringRelay) OpenEarly(_ context.Context, h api.StreamHeader) (net.Conn, error) {
	return f.open(h, true)
}

// TestProxyForwardsEarly: a forwarded plain-HTTP request goes out with its
// relayed stream's header (opened early), and a refusal the relay answers
// afterwards still reaches the app as a status, 403 with the reason;
// CONNECT waits for the answer before its 200.
func TestProxyForwardsEarly(t *testing.T) {
	tgt := target(t)
	_, port, _ := net.SplitHostPort(tgt)
	relay := &answeringRelay{refuse: "127.0.0.2:" + port}
	r := &Router{Service: "web", Relay: relay,
		Policy: policy(t, spec.Egress{Mode: spec.EgressProxy, Default: egress.Client})}
	addr := startProxy(t, r)
	if code, body := httpVia(t, addr, tgt); code != 200 || body != "hello from /x" || relay.early.Load() != 1 {
		t.Fatalf("forwarded early: %d %q, %d early opens", code, body, relay.early.Load())
	}
	if code, body := httpVia(t, addr, relay.refuse); code != 403 || !strings.Contains(body, "the server says no") {
		t.Fatalf("refused after an early open: %d %q, want 403 with the reason", code, body)
	}
	if status, body := connectVia(t, addr, tgt); status != "200 Connection established" || !strings.Contains(body, "hello from /tunnel") || relay.early.Load() != 2 {
		t.Fatalf("CONNECT: %s %q, %d early opens (want it answered first)", status, body, relay.early.Load())
	}
}
