package cni

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/containerd/errdefs"
)

// storeManager is a Manager whose state files the test writes by hand, so
// the resolver runs without root or plugins.
func storeManager(t *testing.T, cs ...*Container) *Manager {
	t.Helper()
	m, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(m.stateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	nf := networksFile{Networks: map[string]Network{
		"front": {Name: "front", Subnet: netip.MustParsePrefix("10.4.1.0/24"), Gateway: netip.MustParseAddr("10.4.1.1")},
		"back":  {Name: "back", Subnet: netip.MustParsePrefix("10.4.2.0/24"), Gateway: netip.MustParseAddr("10.4.2.1")},
	}}
	if err := writeJSON(m.networksPath(), nf); err != nil {
		t.Fatal(err)
	}
	if err := m.saveContainers(storeOf(cs...)); err != nil {
		t.Fatal(err)
	}
	return m
}

// Locks down the resolver over real sockets (on 127.0.0.1, no upstream):
// A answers for names of the network, NXDOMAIN for unknown single labels,
// NODATA for other types, SERVFAIL for names it would forward, TCP too,
// and a store change is seen without a restart.
func TestResolverServes(t *testing.T) {
	m := storeManager(t,
		&Container{ID: "web1", Names: []string{"web"}, Attachments: []Attachment{att("front", "10.4.1.2")}},
		&Container{ID: "web2", Names: []string{"web"}, Attachments: []Attachment{att("front", "10.4.1.3", "www.internal")}},
		&Container{ID: "db", Names: []string{"db"}, Attachments: []Attachment{att("back", "10.4.2.2")}},
	)
	r, err := m.NewResolver(bg(), ResolverOptions{Network: "front", Addr: netip.MustParseAddrPort("127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(bg()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	srv := r.Addr()
	for _, proto := range []string{"udp", "tcp"} {
		if rc, ips := askDNS(t, "", proto, srv, "web"); rc != rcodeOK || len(ips) != 2 {
			t.Errorf("%s web: rcode %d %v, want both replicas", proto, rc, ips)
		}
		if rc, ips := askDNS(t, "", proto, srv, "WWW.internal"); rc != rcodeOK || !slices.Equal(ips, []netip.Addr{netip.MustParseAddr("10.4.1.3")}) {
			t.Errorf("%s alias: rcode %d %v", proto, rc, ips)
		}
		if rc, _ := askDNS(t, "", proto, srv, "db"); rc != rcodeNXDomain {
			t.Errorf("%s db on another network: rcode %d, want NXDOMAIN", proto, rc)
		}
		if rc, _ := askDNS(t, "", proto, srv, "example.com"); rc != rcodeServFail {
			t.Errorf("%s example.com with no upstream: rcode %d, want SERVFAIL", proto, rc)
		}
	}
	aaaa := dnsQueryA(5, "web")
	binary.BigEndian.PutUint16(aaaa[len(aaaa)-4:], 28)
	if b := exchange(t, srv, aaaa); b[3]&0xF != rcodeOK || binary.BigEndian.Uint16(b[6:8]) != 0 {
		t.Errorf("AAAA web: %x, want NOERROR without answers", b)
	}
	// Garbage gets no reply; a bad question gets FORMERR.
	if b := exchange(t, srv, append(dnsQueryA(6, "x")[:12], 0xC0, 12, 0, 1, 0, 1)); b[3]&0xF != rcodeFormErr {
		t.Errorf("looping name: %x, want FORMERR", b)
	}
	// The store changes under it: db joins front.
	cf, _ := m.loadContainers()
	cf.Containers["db"].Attachments = append(cf.Containers["db"].Attachments, att("front", "10.4.1.7"))
	if err := m.saveContainers(cf); err != nil {
		t.Fatal(err)
	}
	if rc, ips := askDNS(t, "", "udp", srv, "db"); rc != rcodeOK || !slices.Equal(ips, []netip.Addr{netip.MustParseAddr("10.4.1.7")}) {
		t.Errorf("db after joining front: rcode %d %v", rc, ips)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

// Locks down scoping by asker: a container on two networks finds names of
// both whichever resolver it asks; an unknown asker only the resolver's.
func TestZoneLookup(t *testing.T) {
	cf := storeOf(
		&Container{ID: "both", Names: []string{"both"}, Attachments: []Attachment{att("front", "10.4.1.5"), att("back", "10.4.2.5")}},
		&Container{ID: "db", Names: []string{"db"}, Attachments: []Attachment{att("back", "10.4.2.2")}},
		&Container{ID: "dbf", Names: []string{"db"}, Attachments: []Attachment{att("front", "10.4.1.9")}},
	)
	z := buildZone(cf)
	ip := netip.MustParseAddr
	if got := z.lookup("front", ip("10.4.1.5"), "db"); !slices.Equal(got, []netip.Addr{ip("10.4.1.9")}) {
		t.Errorf("first network wins: %v", got)
	}
	if got := z.lookup("front", ip("10.4.2.5"), "DB"); !slices.Equal(got, []netip.Addr{ip("10.4.1.9")}) {
		t.Errorf("asker known by its other address: %v", got)
	}
	if got := z.lookup("back", ip("192.0.2.1"), "db"); !slices.Equal(got, []netip.Addr{ip("10.4.2.2")}) {
		t.Errorf("unknown asker on back: %v", got)
	}
	if got := z.lookup("front", netip.Addr{}, "nosuch"); got != nil {
		t.Errorf("nosuch: %v", got)
	}
}

// Locks down resolver options: unknown network, bad or looping upstreams.
func TestNewResolverOptions(t *testing.T) {
	m := storeManager(t)
	if _, err := m.NewResolver(bg(), ResolverOptions{Network: "nosuch"}); !errdefs.IsNotFound(err) {
		t.Errorf("unknown network: %v", err)
	}
	if _, err := m.NewResolver(bg(), ResolverOptions{Network: "front", Upstreams: []string{"dns.example"}}); !errdefs.IsInvalidArgument(err) {
		t.Errorf("name as upstream: %v", err)
	}
	if _, err := m.NewResolver(bg(), ResolverOptions{Network: "front", Upstreams: []string{"10.4.1.1"}}); !errdefs.IsInvalidArgument(err) {
		t.Errorf("itself as upstream: %v", err)
	}
	r, err := m.NewResolver(bg(), ResolverOptions{Network: "front", Upstreams: []string{"192.0.2.53", "[2001:db8::1]:5353"}})
	if err != nil || r.Addr() != netip.MustParseAddrPort("10.4.1.1:53") || len(r.upstreams) != 2 || r.upstreams[0].Port() != 53 {
		t.Errorf("resolver %+v, %v", r, err)
	}
}

// exchange sends one UDP query and returns the reply.
func exchange(t *testing.T, srv netip.AddrPort, q []byte) []byte {
	t.Helper()
	c, err := net.Dial("udp", srv.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(q); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1024)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}
