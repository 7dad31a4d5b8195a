package outbound

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strconv"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
)

// SOCKS5 (RFC 1928), CONNECT only, no authentication: the listener is on
// the workload's own loopback.
const (
	socksVersion     = 5
	socksNoAuth      = 0
	socksNoMethod    = 0xff
	socksCmdConnect  = 1
	socksAtypIPv4    = 1
	socksAtypDomain  = 3
	socksAtypIPv6    = 4
	socksOK          = 0
	socksFailure     = 1
	socksNotAllowed  = 2
	socksUnreachable = 4
	socksCmdNotSupp  = 7
	socksAtypNotSupp = 8
)

func (p *Proxy) socks(ctx context.Context, c net.Conn, br *bufio.Reader, lr *io.LimitedReader) {
	d, ok := socksHandshake(c, br)
	if !ok {
		return
	}
	up, dec, err := p.Router.Connect(ctx, d)
	p.logged(d, dec, err)
	if err != nil {
		code := byte(socksUnreachable)
		switch {
		case errdefs.IsPermissionDenied(err):
			code = socksNotAllowed
		case errdefs.IsInvalidArgument(err):
			code = socksFailure
		}
		socksReply(c, code)
		return
	}
	defer up.Close()
	unbound(c, lr)
	if !socksReply(c, socksOK) {
		return
	}
	pipe(c, br, up)
}

// socksHandshake reads the greeting and the request; a refusal is
// answered here.
func socksHandshake(c net.Conn, br *bufio.Reader) (egress.Destination, bool) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || hdr[0] != socksVersion {
		return egress.Destination{}, false
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return egress.Destination{}, false
	}
	method := byte(socksNoMethod)
	for _, m := range methods {
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err := c.Write([]byte{socksVersion, method}); err != nil || method != socksNoAuth {
		return egress.Destination{}, false
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != socksVersion {
		return egress.Destination{}, false
	}
	if req[1] != socksCmdConnect {
		socksReply(c, socksCmdNotSupp)
		return egress.Destination{}, false
	}
	var host string
	switch req[3] {
	case socksAtypIPv4, socksAtypIPv6:
		n := 4
		if req[3] == socksAtypIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return egress.Destination{}, false
		}
		ip, _ := netip.AddrFromSlice(b)
		host = ip.Unmap().String()
	case socksAtypDomain:
		l, err := br.ReadByte()
		if err != nil {
			return egress.Destination{}, false
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return egress.Destination{}, false
		}
		host = string(b)
	default:
		socksReply(c, socksAtypNotSupp)
		return egress.Destination{}, false
	}
	var port [2]byte
	if _, err := io.ReadFull(br, port[:]); err != nil {
		return egress.Destination{}, false
	}
	d, err := egress.ParseDestination(net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))))
	if err != nil {
		socksReply(c, socksFailure)
		return egress.Destination{}, false
	}
	return d, true
}

// socksReply answers the request; the bound address is not meaningful
// here and is sent as 0.0.0.0:0.
func socksReply(c net.Conn, code byte) bool {
	_, err := c.Write([]byte{socksVersion, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	return err == nil
}
