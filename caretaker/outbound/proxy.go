package outbound

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
)

// Bounds on what a workload may send before its connection is carried.
const (
	maxRequestHead = 64 << 10 // an HTTP request line and headers
	headTimeout    = 30 * time.Second
)

// Proxy serves proxy mode: HTTP (CONNECT, and absolute-URI requests) and
// SOCKS5 (CONNECT) on one listener, told apart by the first byte.
type Proxy struct {
	Router *Router
	Log    *slog.Logger
}

// Serve accepts until ln closes or ctx ends.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	return acceptEach(ctx, ln, p.serve)
}

// acceptEach serves each connection of ln with serve until ln closes or
// ctx ends, then waits for the connections in flight.
func acceptEach(ctx context.Context, ln net.Listener, serve func(context.Context, net.Conn)) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Go(func() { serve(ctx, c) })
	}
}

func (p *Proxy) serve(ctx context.Context, c net.Conn) {
	defer c.Close()
	// The head (request line and headers, or the SOCKS handshake) is
	// bounded in size and time; the limit is lifted once it is read.
	_ = c.SetReadDeadline(time.Now().Add(headTimeout))
	lr := &io.LimitedReader{R: c, N: maxRequestHead}
	br := bufio.NewReaderSize(lr, 4096)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		p.socks(ctx, c, br, lr)
		return
	}
	p.http(ctx, c, br, lr)
}

// unbound lifts the head's limits once it is read.
func unbound(c net.Conn, lr *io.LimitedReader) {
	lr.N = math.MaxInt64
	_ = c.SetReadDeadline(time.Time{})
}

// http serves one proxied HTTP request: CONNECT tunnels; an absolute-URI
// request is forwarded on a connection of its own (Connection: close, so
// the next request, perhaps to another host, comes on a new one).
func (p *Proxy) http(ctx context.Context, c net.Conn, br *bufio.Reader, lr *io.LimitedReader) {
	req, err := http.ReadRequest(br)
	if err != nil {
		writeStatus(c, http.StatusBadRequest, "cornus egress proxy: "+err.Error())
		return
	}
	hostport := req.Host
	if req.Method != http.MethodConnect {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			writeStatus(c, http.StatusBadRequest, "cornus egress proxy: an absolute http:// URI or CONNECT is required")
			return
		}
		hostport = req.URL.Host
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			hostport = net.JoinHostPort(req.URL.Hostname(), "80")
		}
	}
	d, err := egress.ParseDestination(hostport)
	if err != nil {
		writeStatus(c, http.StatusBadRequest, "cornus egress proxy: "+err.Error())
		return
	}
	// A forwarded request goes out with a relayed stream's header (no
	// round trip waited for): its refusal still reaches the app as a
	// status, nothing having been written to it yet. CONNECT's 200 must
	// wait for the answer.
	forward := req.Method != http.MethodConnect
	connect := p.Router.Connect
	if forward {
		connect = p.Router.ConnectEarly
	}
	up, dec, err := connect(ctx, d)
	if err == nil {
		unbound(c, lr)
		if forward {
			err = forwardRequest(req, up)
		}
	}
	p.logged(d, dec, err)
	if err != nil {
		if up != nil {
			up.Close()
		}
		code := http.StatusBadGateway
		if errdefs.IsPermissionDenied(err) {
			code = http.StatusForbidden
		}
		writeStatus(c, code, "cornus egress: "+err.Error())
		return
	}
	defer up.Close()
	if !forward {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
	}
	pipe(c, br, up)
}

// forwardRequest sends req on up, then waits for up's answer where it was
// opened early (api.Answer): the refusal, or nil.
func forwardRequest(req *http.Request, up net.Conn) error {
	req.RequestURI = ""
	req.Close = true
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	werr := req.Write(up)
	if err := api.Answer(up); err != nil {
		return err
	}
	return werr
}

func writeStatus(c net.Conn, code int, msg string) {
	body := msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %s\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), strconv.Itoa(len(body)), body)
}

func (p *Proxy) logged(d egress.Destination, dec egress.Decision, err error) {
	if p.Log == nil {
		return
	}
	if err != nil {
		p.Log.Info("egress", "dest", d.String(), "route", dec.Route, "by", dec.By, "error", err.Error())
		return
	}
	p.Log.Debug("egress", "dest", d.String(), "route", dec.Route, "by", dec.By)
}

// pipe copies both ways until both sides are done; down's reads come
// through br (which may hold bytes read ahead).
func pipe(down net.Conn, br io.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() {
		_, _ = streamcopy.Copy(up, br)
		streamcopy.CloseWrite(up)
		close(done)
	}()
	_, _ = streamcopy.Copy(down, up)
	streamcopy.CloseWrite(down)
	<-done
}
