package cni

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"
)

// Resolver tuning. The TTL is short because peers come and go; glibc does
// not cache anyway.
const (
	dnsTTL         = 10
	forwardTimeout = 3 * time.Second
	tcpIdleTimeout = 10 * time.Second
	maxInflight    = 64 // concurrent forwards and TCP connections, each
	maxDNSMessage  = 65535
	defaultDNSPort = 53
)

// ResolverOptions configure a Resolver.
type ResolverOptions struct {
	// Network whose containers ask; the listen address defaults to its
	// gateway.
	Network string
	// Addr overrides the listen address (default gateway:53).
	Addr netip.AddrPort
	// Upstreams get every name that is not ours, tried in order ("ip" or
	// "ip:port"). None: such names get SERVFAIL.
	Upstreams []string
}

// Resolver is a DNS server on one network's gateway (UDP and TCP) that
// answers A queries for the names in the store, NXDOMAIN for other
// single-label names, and forwards the rest. It re-reads the store when
// containers.json changes. Which process hosts it is the backend's choice.
type Resolver struct {
	m         *Manager
	network   string
	addr      netip.AddrPort
	upstreams []netip.AddrPort

	mu   sync.Mutex
	key  fileKey
	zone zone

	sem    chan struct{}
	wg     sync.WaitGroup
	done   context.Context // cancelled by Close
	cancel context.CancelFunc
	once   sync.Once
	udp    *net.UDPConn
	tcp    net.Listener
}

// NewResolver prepares a Resolver for opts.Network; it listens on Start.
func (m *Manager) NewResolver(ctx context.Context, opts ResolverOptions) (*Resolver, error) {
	n, err := m.InspectNetwork(ctx, opts.Network)
	if err != nil {
		return nil, fmt.Errorf("resolver: %w", err)
	}
	r := &Resolver{m: m, network: n.Name, addr: opts.Addr, sem: make(chan struct{}, 2*maxInflight)}
	r.done, r.cancel = context.WithCancel(context.Background())
	if !r.addr.IsValid() {
		r.addr = netip.AddrPortFrom(n.Gateway, defaultDNSPort)
	}
	for _, u := range opts.Upstreams {
		ap, err := parseUpstream(u)
		if err != nil {
			return nil, fmt.Errorf("resolver for %s: upstream %q: %w", n.Name, u, err)
		}
		if ap == r.addr {
			return nil, fmt.Errorf("resolver for %s: upstream %s is the resolver itself: %w", n.Name, u, errdefs.ErrInvalidArgument)
		}
		r.upstreams = append(r.upstreams, ap)
	}
	return r, nil
}

func parseUpstream(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("want an IP or IP:port: %w", errdefs.ErrInvalidArgument)
	}
	return netip.AddrPortFrom(a, defaultDNSPort), nil
}

// Addr is the listen address (the bound one once started).
func (r *Resolver) Addr() netip.AddrPort { return r.addr }

// Start binds UDP and TCP and serves until Close. It binds with
// IP_FREEBIND, so it may start before the first Attach has put the
// gateway address on the bridge.
func (r *Resolver) Start(ctx context.Context) error {
	kernelPort := r.addr.Port() == 0
	for try := 0; ; try++ {
		err := r.listen(ctx)
		// A port the kernel chose for UDP may be another's on TCP: choose
		// again (CI43: EADDRINUSE beside the other test packages).
		if err == nil || !kernelPort || !errors.Is(err, syscall.EADDRINUSE) || try == 20 {
			if err != nil {
				return err
			}
			break
		}
		r.addr = netip.AddrPortFrom(r.addr.Addr(), 0)
	}
	r.wg.Add(2)
	go r.serveUDP()
	go r.serveTCP()
	return nil
}

// listen binds the UDP socket, then TCP on the same port.
func (r *Resolver) listen(ctx context.Context) error {
	lc := net.ListenConfig{Control: freebind}
	pc, err := lc.ListenPacket(ctx, "udp4", r.addr.String())
	if err != nil {
		return fmt.Errorf("resolver for %s: listen udp %s: %w", r.network, r.addr, err)
	}
	r.udp = pc.(*net.UDPConn)
	if r.addr.Port() == 0 {
		r.addr = netip.AddrPortFrom(r.addr.Addr(), uint16(r.udp.LocalAddr().(*net.UDPAddr).Port))
	}
	ln, err := lc.Listen(ctx, "tcp4", r.addr.String())
	if err != nil {
		_ = r.udp.Close()
		r.udp = nil
		return fmt.Errorf("resolver for %s: listen tcp %s: %w", r.network, r.addr, err)
	}
	r.tcp = ln
	return nil
}

func freebind(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_IP, unix.IP_FREEBIND, 1) })
	return errors.Join(err, serr)
}

// Close stops serving and waits for in-flight queries. Idempotent.
func (r *Resolver) Close() error {
	var err error
	r.once.Do(func() {
		r.cancel()
		if r.udp != nil {
			err = r.udp.Close()
		}
		if r.tcp != nil {
			err = errors.Join(err, r.tcp.Close())
		}
	})
	r.wg.Wait()
	return err
}

func (r *Resolver) serveUDP() {
	defer r.wg.Done()
	buf := make([]byte, maxDNSMessage)
	for {
		n, src, err := r.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP errors surfacing on the socket
		}
		msg := append([]byte(nil), buf[:n]...)
		resp, fwd := r.answer(msg, src.Addr(), maxUDPAnswer)
		if !fwd {
			if resp != nil {
				_, _ = r.udp.WriteToUDPAddrPort(resp, src)
			}
			continue
		}
		select {
		case r.sem <- struct{}{}:
		default: // overloaded: tell the client now rather than never
			_, _ = r.udp.WriteToUDPAddrPort(resp, src)
			continue
		}
		r.wg.Add(1)
		go func() {
			defer func() { <-r.sem; r.wg.Done() }()
			if out := r.forward(msg, false); out != nil {
				resp = out
			}
			_, _ = r.udp.WriteToUDPAddrPort(resp, src)
		}()
	}
}

func (r *Resolver) serveTCP() {
	defer r.wg.Done()
	for {
		c, err := r.tcp.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and friends: back off
			continue
		}
		select {
		case r.sem <- struct{}{}:
		default:
			_ = c.Close()
			continue
		}
		r.wg.Add(1)
		go func() {
			defer func() { <-r.sem; r.wg.Done() }()
			r.serveConn(c)
		}()
	}
}

// serveConn answers length-prefixed queries (RFC 7766) until the client
// goes quiet or we close.
func (r *Resolver) serveConn(c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(r.done, func() { _ = c.Close() })
	defer stop()
	src := netip.Addr{}
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		src = ta.AddrPort().Addr()
	}
	var lenBuf [2]byte
	for {
		_ = c.SetDeadline(time.Now().Add(tcpIdleTimeout))
		if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(lenBuf[:]))
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		resp, fwd := r.answer(msg, src, maxDNSMessage)
		if fwd {
			if out := r.forward(msg, true); out != nil {
				resp = out
			}
		}
		if resp == nil {
			return
		}
		// One write: length and message in one segment.
		if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(resp))), resp...)); err != nil {
			return
		}
	}
}

// answer decides a query: a reply to send now, or forward=true with the
// reply to send should forwarding fail (SERVFAIL). nil, false: drop.
func (r *Resolver) answer(msg []byte, src netip.Addr, limit int) ([]byte, bool) {
	q, err := parseQuery(msg)
	if err != nil {
		return nil, false
	}
	ra := len(r.upstreams) > 0
	if q.rcode != 0 {
		return buildResponse(q, dnsAnswer{ra: ra}, 0, limit), false
	}
	if q.plain && q.qclass == classIN {
		if ips := r.currentZone().lookup(r.network, src, q.name()); ips != nil {
			a := dnsAnswer{auth: true, ra: ra}
			if q.qtype == typeA || q.qtype == typeAny {
				a.ips = ips
			} // other types: NODATA, so clients do not fall through to upstreams
			return buildResponse(q, a, dnsTTL, limit), false
		}
		if len(q.labels) == 1 {
			return buildResponse(q, dnsAnswer{rcode: rcodeNXDomain, auth: true, ra: ra}, dnsTTL, limit), false
		}
	}
	servfail := buildResponse(q, dnsAnswer{rcode: rcodeServFail, ra: ra}, 0, limit)
	return servfail, ra
}

// forward relays msg to the upstreams in turn and returns the first reply
// that matches its ID, or nil.
func (r *Resolver) forward(msg []byte, tcp bool) []byte {
	id := binary.BigEndian.Uint16(msg[0:2])
	for _, u := range r.upstreams {
		if r.done.Err() != nil {
			return nil
		}
		var resp []byte
		var err error
		if tcp {
			resp, err = exchangeTCP(u, msg)
		} else {
			resp, err = exchangeUDP(u, msg)
		}
		if err == nil && len(resp) >= dnsHeaderLen && binary.BigEndian.Uint16(resp[0:2]) == id {
			return resp
		}
	}
	return nil
}

func exchangeUDP(u netip.AddrPort, msg []byte) ([]byte, error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(u))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(forwardTimeout))
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	buf := make([]byte, maxDNSMessage)
	n, err := c.Read(buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func exchangeTCP(u netip.AddrPort, msg []byte) ([]byte, error) {
	c, err := net.DialTimeout("tcp", u.String(), forwardTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(forwardTimeout))
	if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...)); err != nil {
		return nil, err
	}
	var lenBuf [2]byte
	if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
		return nil, err
	}
	resp := make([]byte, binary.BigEndian.Uint16(lenBuf[:]))
	if _, err := io.ReadFull(c, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// fileKey identifies one version of containers.json: writers replace it
// by rename, so the inode changes with every write.
type fileKey struct {
	ino   uint64
	size  int64
	mtime time.Time
}

// currentZone re-reads the store when containers.json changed; a failed
// read keeps the last good zone.
func (r *Resolver) currentZone() zone {
	r.mu.Lock()
	defer r.mu.Unlock()
	var k fileKey
	if fi, err := os.Stat(r.m.containersPath()); err == nil {
		k = fileKey{size: fi.Size(), mtime: fi.ModTime()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			k.ino = st.Ino
		}
	}
	if k == r.key && r.zone.names != nil {
		return r.zone
	}
	cf, err := r.m.loadContainers()
	if err != nil && r.zone.names != nil {
		return r.zone
	}
	r.key, r.zone = k, buildZone(cf)
	return r.zone
}
