package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/streamcopy"
	"github.com/cornus-dev/cornus/server/api"
)

// serveStream answers one stream a client opened on its session: a Dial
// to a workload of the session's project, then bytes both ways.
func (s *Server) serveStream(ctx context.Context, sess *session, project string, st net.Conn) {
	defer st.Close()
	h, st, err := readHeader(st)
	if err != nil {
		replyDial(st, err)
		return
	}
	if h.Op != api.OpDial || h.Dial == nil {
		replyDial(st, fmt.Errorf("%w: a client session opens dial streams only, not %q", errdefs.ErrInvalidArgument, h.Op))
		return
	}
	// The project may have changed hands since the session opened (a
	// down, then another tenant's up): every stream is checked.
	if !s.owners.owns(sess.tenant, project) {
		replyDial(st, fmt.Errorf("%w: no project %s of yours", errdefs.ErrPermissionDenied, project))
		return
	}
	d := *h.Dial
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	var conn net.Conn
	if s.remoteDial {
		// Remote mode: dialed by the replica's companion, in its network
		// namespace; UDP stays framed end to end.
		conn, err = s.openToReplica(dctx, project, d.Service, d.Index, api.StreamHeader{Op: api.OpDial, Dial: &d}, st)
		cancel()
		bridge(st, conn, err)
		return
	}
	conn, err = DialWorkload(dctx, s.b, s.e, project, d)
	cancel()
	if err != nil {
		replyDial(st, err)
		return
	}
	defer conn.Close()
	replyDial(st, nil)
	if d.Proto == "udp" {
		pipeDatagrams(st, conn)
		return
	}
	streamcopy.Pipe(st, conn)
}

func replyDial(st net.Conn, err error) { api.Reply(st, err) }

// DialWorkload connects from this host to a port of one replica of a
// service (port-forward and tunnel; the CLI uses it too without a server).
func DialWorkload(ctx context.Context, b backends.Backend, e *engine.Engine, project string, d api.Dial) (net.Conn, error) {
	if d.Port < 1 || d.Port > 65535 {
		return nil, fmt.Errorf("%w: port %d", errdefs.ErrInvalidArgument, d.Port)
	}
	proto := d.Proto
	if proto == "" {
		proto = "tcp"
	}
	if proto != "tcp" && proto != "udp" {
		return nil, fmt.Errorf("%w: protocol %q: tcp or udp", errdefs.ErrInvalidArgument, d.Proto)
	}
	if hr, err := backends.Want[backends.HostReachChecker](b, backends.FeatureHostReach, "host reach"); err == nil {
		if err := hr.CheckHostReach(ctx, "port-forward and tunnel"); err != nil {
			return nil, err
		}
	}
	c, err := replica(ctx, e, project, d.Service, d.Index)
	if err != nil {
		return nil, err
	}
	if cd, err := backends.Want[backends.ContainerDialer](b, backends.FeatureDial, "dialing containers"); err == nil {
		return cd.DialContainer(ctx, c.ID, d.Port, proto)
	}
	addr, err := address(ctx, b, c, nil)
	if err != nil {
		return nil, err
	}
	var dl net.Dialer
	return dl.DialContext(ctx, proto, net.JoinHostPort(addr, strconv.Itoa(d.Port)))
}

// address is c's address on the first of its networks (by name) that
// on accepts (nil: any), else on its first.
func address(ctx context.Context, b backends.Backend, c backends.Container, on func(network string) bool) (string, error) {
	det, err := b.Inspect(ctx, c.ID)
	if err != nil {
		return "", err
	}
	first := ""
	for _, name := range slices.Sorted(maps.Keys(det.Networks)) {
		ip := det.Networks[name].IPAddress
		switch {
		case ip == "":
		case on == nil || on(name):
			return ip, nil
		case first == "":
			first = ip
		}
	}
	if first == "" {
		return "", fmt.Errorf("%w: %s has no network address to dial (no network of its own)", errdefs.ErrFailedPrecondition, c.Name)
	}
	return first, nil
}

// replica finds a running container of service (by service name or
// container name), replica index (1 when 0).
func replica(ctx context.Context, e *engine.Engine, project, service string, index int) (backends.Container, error) {
	if index == 0 {
		index = 1
	}
	cs, err := e.PS(ctx, project, engine.PSOptions{})
	if err != nil {
		return backends.Container{}, err
	}
	for _, c := range cs {
		if (c.App() == service && c.Replica() == strconv.Itoa(index)) || c.Name == service {
			return c, nil
		}
	}
	return backends.Container{}, fmt.Errorf("%w: no running replica %d of service %q in project %s", errdefs.ErrNotFound, index, service, project)
}

// maxDatagram bounds one forwarded UDP datagram.
const maxDatagram = 65507

// pipeDatagrams carries length-prefixed datagrams of stream st to and
// from the UDP socket conn.
func pipeDatagrams(st, conn net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, maxDatagram)
		var hdr [2]byte
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			binary.BigEndian.PutUint16(hdr[:], uint16(n))
			if _, err := st.Write(append(hdr[:], buf[:n]...)); err != nil {
				return
			}
		}
	}()
	_ = ReadDatagrams(st, func(p []byte) error {
		_, err := conn.Write(p)
		return err
	})
	conn.Close()
	<-done
}

// ReadDatagrams calls fn with each length-prefixed datagram read from r
// until r ends.
func ReadDatagrams(r io.Reader, fn func([]byte) error) error {
	var hdr [2]byte
	buf := make([]byte, maxDatagram)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint16(hdr[:]))
		if n > maxDatagram {
			return fmt.Errorf("datagram of %d bytes", n)
		}
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return err
		}
		if err := fn(buf[:n]); err != nil {
			return err
		}
	}
}
