package cni

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"slices"
	"testing"
)

// Locks down query parsing: name (case kept, compression followed
// backwards only), type, class, and the rcode for unusable questions.
func TestParseQuery(t *testing.T) {
	q, err := parseQuery(dnsQueryA(7, "Db.Example"))
	if err != nil || q.id != 7 || q.name() != "db.example" || q.qtype != typeA || q.qclass != classIN || !q.plain || q.rcode != 0 {
		t.Fatalf("parseQuery = %+v, %v", q, err)
	}
	if _, err := parseQuery([]byte{1, 2, 3}); err != errShort {
		t.Errorf("short: %v", err)
	}
	resp := dnsQueryA(7, "x")
	resp[2] |= 0x80
	if _, err := parseQuery(resp); err != errNotQuery {
		t.Errorf("a response: %v", err)
	}
	notify := dnsQueryA(7, "x")
	notify[2] |= 4 << 3
	if q, _ := parseQuery(notify); q.rcode != rcodeNotImp {
		t.Errorf("opcode NOTIFY: rcode %d", q.rcode)
	}
	twoQ := dnsQueryA(7, "x")
	twoQ[5] = 2
	if q, _ := parseQuery(twoQ); q.rcode != rcodeFormErr {
		t.Errorf("two questions: rcode %d", q.rcode)
	}
	// A pointer to itself, and one pointing forward: loops refused.
	for _, name := range [][]byte{{0xC0, 12}, {0xC0, 14, 0}} {
		m := slices.Concat(dnsQueryA(7, "x")[:12], name, []byte{0, 1, 0, 1})
		if q, _ := parseQuery(m); q.rcode != rcodeFormErr {
			t.Errorf("name %x: rcode %d, want FORMERR", name, q.rcode)
		}
	}
	odd := slices.Concat(dnsQueryA(7, "x")[:12], []byte{3, 'a', '.', 'b', 0, 0, 1, 0, 1})
	if q, _ := parseQuery(odd); q.plain {
		t.Errorf("label with a dot counted as plain: %+v", q)
	}
}

// Locks down replies: question echoed, answers pointing at it, AA/RA/RD
// and rcode as decided, TC once answers no longer fit.
func TestBuildResponse(t *testing.T) {
	q, _ := parseQuery(dnsQueryA(9, "web"))
	ips := []netip.Addr{netip.MustParseAddr("10.4.1.2"), netip.MustParseAddr("10.4.1.3")}
	b := buildResponse(q, dnsAnswer{ips: ips, auth: true}, 10, maxUDPAnswer)
	rc, got := answerIPs(t, b)
	flags := binary.BigEndian.Uint16(b[2:4])
	if rc != 0 || len(got) != 2 || got[0] != ips[0] || flags&flagAA == 0 || flags&flagRD == 0 || flags&flagQR == 0 || flags&flagRA != 0 {
		t.Fatalf("response %x: rcode %d ips %v flags %#x", b, rc, got, flags)
	}
	if !bytes.Equal(b[12:12+5], []byte{3, 'w', 'e', 'b', 0}) {
		t.Fatalf("question not echoed: %x", b)
	}
	many := make([]netip.Addr, 100)
	for i := range many {
		many[i] = netip.AddrFrom4([4]byte{10, 4, 1, byte(i)})
	}
	b = buildResponse(q, dnsAnswer{ips: many}, 10, maxUDPAnswer)
	if len(b) > maxUDPAnswer || binary.BigEndian.Uint16(b[2:4])&flagTC == 0 {
		t.Fatalf("%d answers in %d bytes without TC", binary.BigEndian.Uint16(b[6:8]), len(b))
	}
	if _, got := answerIPs(t, buildResponse(q, dnsAnswer{ips: many}, 10, maxDNSMessage)); len(got) != 100 {
		t.Fatalf("TCP-sized reply carried %d of 100 answers", len(got))
	}
	q.rcode = rcodeFormErr
	if b := buildResponse(q, dnsAnswer{}, 0, maxUDPAnswer); len(b) != dnsHeaderLen || b[3]&0xF != rcodeFormErr {
		t.Fatalf("FORMERR reply %x", b)
	}
}

// Fuzz: no input panics the parser, and every query it accepts yields a
// reply that parses back as a response to the same question.
func FuzzParseQuery(f *testing.F) {
	f.Add(dnsQueryA(1, "db"))
	f.Add(dnsQueryA(2, "a.b.c"))
	f.Add(append(dnsQueryA(3, "x")[:12], 0xC0, 12, 0, 1, 0, 1))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		q, err := parseQuery(msg)
		if err != nil {
			return
		}
		b := buildResponse(q, dnsAnswer{ips: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}, 1, maxUDPAnswer)
		if len(b) > maxUDPAnswer || binary.BigEndian.Uint16(b[0:2]) != q.id || b[2]&0x80 == 0 {
			t.Fatalf("bad reply %x to %x", b, msg)
		}
		if q.rcode != 0 {
			return
		}
		b[2] &^= 0x80 // read it back as a query to compare the question
		q2, err := parseQuery(b)
		if err != nil || q2.rcode != 0 || q2.name() != q.name() || q2.qtype != q.qtype || len(q2.labels) != len(q.labels) {
			t.Fatalf("question %q did not survive: %+v %v", q.name(), q2, err)
		}
	})
}
