package outbound

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/egress"
)

// TableName is the nftables table transparent mode installs in the
// workload's network namespace.
const TableName = "cornus_egress"

// Mark is the socket mark of the caretaker's own connections (the cluster
// route, the relay to the server): the redirect skips them.
const Mark = 0xc0e5

// Redirect installs, in the calling thread's network namespace, a table
// that redirects every TCP connection the workload opens to a non-local
// address to port on this host (the transparent listener), except the
// caretaker's own (marked Mark). It replaces a table left by an earlier
// caretaker; Unredirect removes it.
func Redirect(port uint16) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("egress redirect: nftables: %w", err)
	}
	t := &nftables.Table{Family: nftables.TableFamilyINet, Name: TableName}
	if old, err := c.ListTableOfFamily(TableName, nftables.TableFamilyINet); err == nil && old != nil {
		c.DelTable(old)
	}
	c.AddTable(t)
	ch := c.AddChain(&nftables.Chain{Name: "output", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		// meta l4proto tcp
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		// meta mark != Mark
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(Mark)},
		// fib daddr type != local (loopback, the workload's own addresses)
		&expr.Fib{Register: 1, FlagDADDR: true, ResultADDRTYPE: true},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(unix.RTN_LOCAL)},
		// redirect to :port
		&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.Redir{RegisterProtoMin: 1},
	}})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("egress redirect: install nftables table %s: %w", TableName, err)
	}
	return nil
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
// does).
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
	up, dec, err := t.Router.Connect(ctx, d)
	t.Proxy.logged(d, dec, err)
	if err != nil {
		return
	}
	defer up.Close()
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
