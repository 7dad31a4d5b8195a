package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
)

// Forward is one port-forward: LOCAL on the client's loopback to REMOTE
// of a service's replica.
type Forward struct {
	Local  string // host:port to listen on ("127.0.0.1:0": any free port)
	Remote int
	Proto  string // tcp or udp
}

// ParseForward reads "[LOCAL:]REMOTE[/udp]" (LOCAL a port or ip:port).
func ParseForward(s string) (Forward, error) {
	f := Forward{Proto: "tcp"}
	if spec, proto, ok := strings.Cut(s, "/"); ok {
		s, f.Proto = spec, strings.ToLower(proto)
	}
	if f.Proto != "tcp" && f.Proto != "udp" {
		return f, fmt.Errorf("port-forward %q: protocol must be tcp or udp", s)
	}
	local, remote := "", s
	if i := strings.LastIndex(s, ":"); i >= 0 {
		local, remote = s[:i], s[i+1:]
	}
	port, err := strconv.Atoi(remote)
	if err != nil || port < 1 || port > 65535 {
		return f, fmt.Errorf("port-forward %q: the remote port must be 1-65535", s)
	}
	f.Remote = port
	switch {
	case local == "":
		f.Local = "127.0.0.1:" + remote
	case !strings.Contains(local, ":"):
		f.Local = "127.0.0.1:" + local
	default:
		f.Local = local
	}
	return f, nil
}

// Dialer reaches workloads: a session through its server, or the local
// backend directly.
type Dialer interface {
	Dial(ctx context.Context, d api.Dial) (net.Conn, error)
}

// earlyDialer opens a TCP connection before its far end answers
// (Session.DialEarly).
type earlyDialer interface {
	DialEarly(ctx context.Context, d api.Dial) (net.Conn, error)
}

// ServeForward forwards f to service through d until ctx ends; ready is
// told the bound local address.
func ServeForward(ctx context.Context, s Dialer, service string, f Forward, ready func(addr string)) error {
	if f.Proto == "udp" {
		return serveUDP(ctx, s, service, f, ready)
	}
	dial := s.Dial
	if ed, ok := s.(earlyDialer); ok {
		dial = ed.DialEarly // a refusal closes the connection either way
	}
	return serveTCP(ctx, "port-forward", f.Local, ready, func(c net.Conn) {
		defer c.Close()
		st, err := dial(ctx, api.Dial{Service: service, Port: f.Remote, Proto: "tcp"})
		if err != nil {
			return
		}
		defer st.Close()
		streamcopy.Pipe(c, st)
	})
}

// serveTCP listens on addr until ctx ends (then it returns nil), telling
// ready the bound address, and serves each connection in its own
// goroutine.
func serveTCP(ctx context.Context, what, addr string, ready func(string), serve func(net.Conn)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	if ready != nil {
		ready(ln.Addr().String())
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go serve(c)
	}
}

// serveUDP gives each client address its own stream.
func serveUDP(ctx context.Context, s Dialer, service string, f Forward, ready func(string)) error {
	pc, err := net.ListenPacket("udp", f.Local)
	if err != nil {
		return fmt.Errorf("port-forward: %w", err)
	}
	defer pc.Close()
	stop := context.AfterFunc(ctx, func() { pc.Close() })
	defer stop()
	if ready != nil {
		ready(pc.LocalAddr().String())
	}
	var mu sync.Mutex
	peers := map[string]net.Conn{}
	buf := make([]byte, 65535)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		st := peers[from.String()]
		if st == nil {
			if st, err = s.Dial(ctx, api.Dial{Service: service, Port: f.Remote, Proto: "udp"}); err != nil {
				mu.Unlock()
				continue
			}
			peers[from.String()] = st
			go func(st net.Conn, to net.Addr) {
				_ = readDatagrams(st, func(p []byte) error { _, err := pc.WriteTo(p, to); return err })
				mu.Lock()
				delete(peers, to.String())
				mu.Unlock()
				st.Close()
			}(st, from)
		}
		mu.Unlock()
		var hdr [2]byte
		binary.BigEndian.PutUint16(hdr[:], uint16(n))
		_, _ = st.Write(append(hdr[:], buf[:n]...))
	}
}

func readDatagrams(r io.Reader, fn func([]byte) error) error {
	var hdr [2]byte
	buf := make([]byte, 65535)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint16(hdr[:]))
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return err
		}
		if err := fn(buf[:n]); err != nil {
			return err
		}
	}
}
