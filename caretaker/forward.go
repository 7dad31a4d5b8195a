package caretaker

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
)

// dialTimeout bounds a port-forward's dial in the namespace.
const dialTimeout = 10 * time.Second

// dialHandler is the portforward role: the server's OpDial streams (a
// port-forward or tunnel of a remote-mode deployment) dialed on this
// network namespace's loopback, which the app shares.
func dialHandler(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), sibling bool) client.Handler {
	return func(h api.StreamHeader, st net.Conn) {
		defer st.Close()
		d := h.Dial
		if d == nil || d.Port < 1 || d.Port > 65535 {
			client.Reply(st, fmt.Errorf("%w: a dial stream needs a port 1-65535", errdefs.ErrInvalidArgument))
			return
		}
		proto := d.Proto
		if proto == "" {
			proto = "tcp"
		}
		if proto != "tcp" && proto != "udp" {
			client.Reply(st, fmt.Errorf("%w: protocol %q: tcp or udp", errdefs.ErrInvalidArgument, d.Proto))
			return
		}
		host := "127.0.0.1"
		if sibling {
			// Beside the app: its address, as the server names it.
			if host = d.Host; host == "" {
				client.Reply(st, fmt.Errorf("%w: the server named no address of the replica to dial", errdefs.ErrInvalidArgument))
				return
			}
		}
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		conn, err := dial(dctx, proto, net.JoinHostPort(host, strconv.Itoa(d.Port)))
		cancel()
		if err != nil {
			client.Reply(st, fmt.Errorf("%w: %s port %d in the replica's namespace: %v", errdefs.ErrUnavailable, proto, d.Port, err))
			return
		}
		defer conn.Close()
		client.Reply(st, nil)
		if proto == "udp" {
			pipeDatagrams(st, conn)
			return
		}
		streamcopy.Pipe(st, conn)
	}
}

// maxDatagram bounds one forwarded UDP datagram.
const maxDatagram = 65507

// pipeDatagrams carries length-prefixed datagrams (2-byte big-endian
// length, as api.Dial says) between stream st and the UDP socket conn.
func pipeDatagrams(st, conn net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2+maxDatagram)
		for {
			n, err := conn.Read(buf[2:])
			if err != nil {
				return
			}
			binary.BigEndian.PutUint16(buf[:2], uint16(n))
			if _, err := st.Write(buf[:2+n]); err != nil {
				return
			}
		}
	}()
	var hdr [2]byte
	buf := make([]byte, maxDatagram)
	for {
		if _, err := io.ReadFull(st, hdr[:]); err != nil {
			break
		}
		n := int(binary.BigEndian.Uint16(hdr[:]))
		if n > maxDatagram {
			break
		}
		if _, err := io.ReadFull(st, buf[:n]); err != nil {
			break
		}
		if _, err := conn.Write(buf[:n]); err != nil {
			break
		}
	}
	conn.Close()
	<-done
}

// keep redials the relay when it drops (a server restart), so the
// server can reach this replica again, until ctx ends.
func (r *serverRelay) keep(ctx context.Context, log *slog.Logger) {
	for delay := 100 * time.Millisecond; ; {
		s, err := r.session(ctx)
		if err == nil {
			delay = 100 * time.Millisecond
			select {
			case <-ctx.Done():
				return
			case <-s.Done():
				r.drop(s)
				log.Warn("relay dropped: redialing")
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}
