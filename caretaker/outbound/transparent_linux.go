package outbound

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"syscall"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
)

// TableName is the nftables table transparent mode installs in the
// workload's network namespace.
const TableName = "cornus_egress"

// Mark is the socket mark of the caretaker's own connections (the cluster
// route, the relay to the server): the redirect skips them, when they
// were also made in its Owner's cgroup. Setting a mark takes CAP_NET_ADMIN
// or (Linux 5.17) CAP_NET_RAW: the app of a transparent-mode replica has
// both dropped (Companions), so it cannot mark its sockets.
const Mark = 0xc0e5

// chainName is the chain of the table; its first rule (the caretaker's
// own sockets, counted) is what Exempt reads.
const chainName = "output"

// Redirect installs, in the calling thread's network namespace, a table
// that redirects every TCP connection the workload opens to a non-local
// address to port on this host (the transparent listener), except the
// caretaker's own: marked Mark and, when owner is set, made in its cgroup
// (each half stops what the other may not: a process that may mark its
// sockets, one that may join another cgroup). It replaces a table left by
// an earlier caretaker; Unredirect removes it.
func Redirect(port uint16, owner *Owner) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("egress redirect: nftables: %w", err)
	}
	t := &nftables.Table{Family: nftables.TableFamilyINet, Name: TableName}
	if old, err := c.ListTableOfFamily(TableName, nftables.TableFamilyINet); err == nil && old != nil {
		c.DelTable(old)
	}
	c.AddTable(t)
	ch := c.AddChain(&nftables.Chain{Name: chainName, Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest})
	tcp := []expr.Any{
		// meta l4proto tcp
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
	}
	own := append(slices.Clone(tcp),
		// meta mark == Mark
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(Mark)})
	if owner != nil {
		// socket cgroupv2 level L == id
		own = append(own,
			&expr.Socket{Key: expr.SocketKeyCgroupv2, Level: owner.Level, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint64(owner.Cgroup)})
	}
	own = append(own, &expr.Counter{}, &expr.Verdict{Kind: expr.VerdictAccept})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: own})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: append(tcp,
		// fib daddr type != local (loopback, the workload's own addresses)
		&expr.Fib{Register: 1, FlagDADDR: true, ResultADDRTYPE: true},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(unix.RTN_LOCAL)},
		// redirect to :port
		&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.Redir{RegisterProtoMin: 1},
	)})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("egress redirect: install nftables table %s: %w", TableName, err)
	}
	return nil
}

// Exempt reports whether the redirect Redirect installed skips the calling
// process's marked sockets: one marked connection to a listener of its own
// on loopback (never redirected, but seen by the first rule), and that
// rule's counter. False means the owner's cgroup does not match this
// process's sockets (a kernel that counts its level from elsewhere): its
// own dials would come back to its listener.
func Exempt() (bool, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return false, fmt.Errorf("egress redirect: probe: %w", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	conn, err := MarkedDialer().Dial("tcp4", ln.Addr().String())
	if err != nil {
		return false, fmt.Errorf("egress redirect: probe: %w", err)
	}
	conn.Close()
	c, err := nftables.New()
	if err != nil {
		return false, fmt.Errorf("egress redirect: nftables: %w", err)
	}
	t := &nftables.Table{Family: nftables.TableFamilyINet, Name: TableName}
	rules, err := c.GetRules(t, &nftables.Chain{Name: chainName, Table: t})
	if err != nil {
		return false, fmt.Errorf("egress redirect: read table %s: %w", TableName, err)
	}
	if len(rules) == 0 {
		return false, fmt.Errorf("egress redirect: table %s has no rules", TableName)
	}
	for _, e := range rules[0].Exprs {
		if n, ok := e.(*expr.Counter); ok {
			return n.Packets > 0, nil
		}
	}
	return false, fmt.Errorf("egress redirect: table %s: its first rule has no counter", TableName)
}

// Unredirect removes the table Redirect installed, if any.
func Unredirect() error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("egress redirect: nftables: %w", err)
	}
	t, err := c.ListTableOfFamily(TableName, nftables.TableFamilyINet)
	if err != nil || t == nil {
		return nil
	}
	c.DelTable(t)
	return c.Flush()
}

// MarkedDialer dials with Mark on its sockets, so transparent mode's
// redirect lets them through (it needs CAP_NET_ADMIN, as the redirect
// does; and, where the redirect has an Owner, the caller in its cgroup).
func MarkedDialer() *net.Dialer {
	return &net.Dialer{Timeout: dialTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, Mark) })
		return errors.Join(err, serr)
	}}
}

// Transparent serves transparent mode: connections the redirect sent to
// its listener, carried to their original destination as the policy says.
// A refused connection is closed (TCP has no way to say why; the caretaker
// logs it).
type Transparent struct {
	Router *Router
	Proxy  *Proxy // for its log
}

// Serve accepts until ln closes or ctx ends.
func (t *Transparent) Serve(ctx context.Context, ln net.Listener) error {
	return acceptEach(ctx, ln, t.serve)
}

func (t *Transparent) serve(ctx context.Context, c net.Conn) {
	defer c.Close()
	dst, err := OriginalDst(c)
	if err != nil {
		return
	}
	d := egress.Destination{Host: dst.Addr().String(), IP: dst.Addr(), Port: int(dst.Port())}
	// The app's connection is accepted already: a relayed one is opened
	// early, the app's first bytes behind its header, and logged with
	// the server's answer.
	up, dec, err := t.Router.ConnectEarly(ctx, d)
	if err != nil {
		t.Proxy.logged(d, dec, err)
		return
	}
	defer up.Close()
	go func() { t.Proxy.logged(d, dec, api.Answer(up)) }()
	pipe(c, c, up)
}

// OriginalDst is where a redirected connection was headed
// (SO_ORIGINAL_DST, IPv4 and IPv6).
func OriginalDst(c net.Conn) (netip.AddrPort, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("original destination: not a TCP connection")
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	local, _ := netip.ParseAddrPort(c.LocalAddr().String())
	var out netip.AddrPort
	var serr error
	err = rc.Control(func(fd uintptr) {
		if local.Addr().Unmap().Is4() {
			// struct sockaddr_in, read through a 16-byte getsockopt.
			var m *unix.IPv6Mreq
			m, serr = unix.GetsockoptIPv6Mreq(int(fd), unix.IPPROTO_IP, unix.SO_ORIGINAL_DST)
			if serr == nil {
				b := m.Multiaddr
				out = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4]))
			}
			return
		}
		// struct sockaddr_in6 (28 bytes), read through a 32-byte one.
		var m *unix.IPv6MTUInfo
		m, serr = unix.GetsockoptIPv6MTUInfo(int(fd), unix.IPPROTO_IPV6, ip6tSoOriginalDst)
		if serr == nil {
			var port [2]byte // sin6_port, in network order in memory
			binary.NativeEndian.PutUint16(port[:], m.Addr.Port)
			out = netip.AddrPortFrom(netip.AddrFrom16(m.Addr.Addr).Unmap(), binary.BigEndian.Uint16(port[:]))
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", err)
	}
	return out, nil
}

// ip6tSoOriginalDst is IP6T_SO_ORIGINAL_DST (linux/netfilter_ipv6/ip6_tables.h),
// which x/sys/unix does not name.
const ip6tSoOriginalDst = 80
