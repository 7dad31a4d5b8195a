package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
)

// ServeTunnel serves SOCKS5 on addr: CONNECT to SERVICE:PORT (a service
// or container name of the project) goes through d.
// No authentication: it listens on loopback unless told otherwise.
func ServeTunnel(ctx context.Context, s Dialer, addr string, ready func(string)) error {
	return serveTCP(ctx, "tunnel", addr, ready, func(c net.Conn) { socks(ctx, s, c) })
}

// SOCKS5 (RFC 1928) reply codes cornus uses.
const (
	socksOK          = 0x00
	socksFailure     = 0x01
	socksUnreachable = 0x04
	socksRefused     = 0x05
	socksNoCommand   = 0x07
	socksNoAddrType  = 0x08
)

func socks(ctx context.Context, s Dialer, c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	host, port, err := socksHandshake(br, c)
	if err != nil {
		return
	}
	st, err := s.Dial(ctx, api.Dial{Service: host, Port: port})
	if err != nil {
		code := byte(socksFailure)
		switch {
		case errdefs.IsNotFound(err):
			code = socksUnreachable
		case errors.Is(err, errdefs.ErrFailedPrecondition), errdefs.IsPermissionDenied(err):
			code = socksRefused
		}
		socksReply(c, code)
		return
	}
	defer st.Close()
	socksReply(c, socksOK)
	_ = c.SetDeadline(time.Time{})
	streamcopy.Pipe(&api.BufferedConn{Conn: c, R: br}, st)
}

// socksHandshake reads the greeting (no-auth only) and a CONNECT request.
func socksHandshake(br *bufio.Reader, w io.Writer) (string, int, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || hdr[0] != 5 {
		return "", 0, errors.New("not SOCKS5")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", 0, err
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == 0
	}
	if !noAuth {
		_, _ = w.Write([]byte{5, 0xff})
		return "", 0, errors.New("no acceptable method")
	}
	if _, err := w.Write([]byte{5, 0}); err != nil {
		return "", 0, err
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != 5 {
		return "", 0, errors.New("bad request")
	}
	if req[1] != 1 { // CONNECT
		socksReply(w, socksNoCommand)
		return "", 0, errors.New("only CONNECT")
	}
	var host string
	switch req[3] {
	case 3: // domain name: a service
		n, err := br.ReadByte()
		if err != nil {
			return "", 0, err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return "", 0, err
		}
		host = string(name)
	case 1: // IPv4: not a service name
		var skip [6]byte
		_, _ = io.ReadFull(br, skip[:])
		socksReply(w, socksNoAddrType)
		return "", 0, errors.New("the tunnel reaches services by name")
	default:
		socksReply(w, socksNoAddrType)
		return "", 0, errors.New("address type")
	}
	var p [2]byte
	if _, err := io.ReadFull(br, p[:]); err != nil {
		return "", 0, err
	}
	return host, int(binary.BigEndian.Uint16(p[:])), nil
}

func socksReply(w io.Writer, code byte) {
	_, _ = w.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
}
