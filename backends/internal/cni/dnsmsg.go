package cni

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
)

// A minimal DNS wire codec (RFC 1035) for the one thing the resolver
// answers itself: a single question about a name, answered with A records,
// NODATA or NXDOMAIN. Everything else is forwarded as raw bytes, so
// there is no need for a full message library here.

const (
	dnsHeaderLen = 12
	maxUDPAnswer = 512 // without EDNS(0), which we neither parse nor need
	maxDNSName   = 255 // wire length, RFC 1035 §2.3.4
	maxPointers  = 32  // compression hops before we call it a loop

	typeA   = 1
	typeAny = 255
	classIN = 1

	flagQR = 1 << 15
	flagAA = 1 << 10
	flagTC = 1 << 9
	flagRD = 1 << 8
	flagRA = 1 << 7

	rcodeOK       = 0
	rcodeFormErr  = 1
	rcodeServFail = 2
	rcodeNXDomain = 3
	rcodeNotImp   = 4
)

var (
	errShort    = errors.New("dns: message too short")
	errNotQuery = errors.New("dns: not a query")
	errBadName  = errors.New("dns: malformed name")
)

// dnsQuery is the parsed header and single question of a query.
type dnsQuery struct {
	id     uint16
	flags  uint16
	labels [][]byte // as sent (case kept for the echo)
	qtype  uint16
	qclass uint16
	// plain is set when every label is made of [A-Za-z0-9_-]: only such
	// names can be ours (validHostName), others are never answered locally.
	plain bool
	// rcode is non-zero when the header is usable but the question is not
	// (FORMERR, NOTIMP): reply with it and no question.
	rcode int
}

// name is the question name in lower case without the trailing dot.
func (q dnsQuery) name() string {
	parts := make([]string, len(q.labels))
	for i, l := range q.labels {
		parts[i] = strings.ToLower(string(l))
	}
	return strings.Join(parts, ".")
}

// parseQuery reads a query. errShort and errNotQuery mean "drop it" (no ID
// to answer, or a response someone bounced at us); otherwise q.rcode says
// whether the question was usable.
func parseQuery(b []byte) (dnsQuery, error) {
	var q dnsQuery
	if len(b) < dnsHeaderLen {
		return q, errShort
	}
	q.id = binary.BigEndian.Uint16(b[0:2])
	q.flags = binary.BigEndian.Uint16(b[2:4])
	if q.flags&flagQR != 0 {
		return q, errNotQuery
	}
	if opcode := q.flags >> 11 & 0xF; opcode != 0 {
		q.rcode = rcodeNotImp
		return q, nil
	}
	if binary.BigEndian.Uint16(b[4:6]) != 1 {
		q.rcode = rcodeFormErr
		return q, nil
	}
	labels, end, err := readName(b, dnsHeaderLen)
	if err != nil || end+4 > len(b) {
		q.rcode = rcodeFormErr
		return q, nil
	}
	q.labels = labels
	q.qtype = binary.BigEndian.Uint16(b[end : end+2])
	q.qclass = binary.BigEndian.Uint16(b[end+2 : end+4])
	q.plain = len(labels) > 0
	for _, l := range labels {
		q.plain = q.plain && plainLabel(l)
	}
	return q, nil
}

// readName decodes the name at off, following compression pointers only
// backwards (so no loops), and returns its labels and the offset just
// past the name in the original position.
func readName(b []byte, off int) ([][]byte, int, error) {
	var labels [][]byte
	end, wire, hops := -1, 1, 0
	for {
		if off >= len(b) {
			return nil, 0, errBadName
		}
		n := int(b[off])
		switch {
		case n == 0:
			if end < 0 {
				end = off + 1
			}
			return labels, end, nil
		case n&0xC0 == 0xC0:
			if off+1 >= len(b) {
				return nil, 0, errBadName
			}
			ptr := int(binary.BigEndian.Uint16(b[off:off+2]) & 0x3FFF)
			if hops++; hops > maxPointers || ptr >= off {
				return nil, 0, errBadName
			}
			if end < 0 {
				end = off + 2
			}
			off = ptr
		case n&0xC0 != 0:
			return nil, 0, errBadName // extended label types (RFC 6891 §5) are obsolete
		default:
			if wire += n + 1; wire > maxDNSName || off+1+n > len(b) {
				return nil, 0, errBadName
			}
			labels = append(labels, b[off+1:off+1+n])
			off += 1 + n
		}
	}
}

func plainLabel(l []byte) bool {
	for _, c := range l {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return len(l) > 0
}

// dnsAnswer is what the resolver decided for a query it answers itself.
type dnsAnswer struct {
	rcode int
	ips   []netip.Addr
	auth  bool // AA: the name is ours
	ra    bool // RA: we forward, so recursion is available
}

// buildResponse encodes the reply to q. Answers that would push a reply
// over limit are dropped and TC set, so the client retries over TCP.
func buildResponse(q dnsQuery, a dnsAnswer, ttl uint32, limit int) []byte {
	b := make([]byte, dnsHeaderLen, 512)
	flags := flagQR | q.flags&(0xF<<11|flagRD) | uint16(a.rcode&0xF)
	if a.auth {
		flags |= flagAA
	}
	if a.ra {
		flags |= flagRA
	}
	binary.BigEndian.PutUint16(b[0:2], q.id)
	if q.rcode != 0 {
		flags = flags&^0xF | uint16(q.rcode&0xF)
		binary.BigEndian.PutUint16(b[2:4], flags)
		return b // no question section
	}
	binary.BigEndian.PutUint16(b[4:6], 1)
	for _, l := range q.labels {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	b = append(b, 0)
	b = binary.BigEndian.AppendUint16(b, q.qtype)
	b = binary.BigEndian.AppendUint16(b, q.qclass)
	n := 0
	for _, ip := range a.ips {
		if !ip.Is4() {
			continue
		}
		if len(b)+16 > limit {
			flags |= flagTC
			break
		}
		b = append(b, 0xC0, dnsHeaderLen) // pointer to the question name
		b = binary.BigEndian.AppendUint16(b, typeA)
		b = binary.BigEndian.AppendUint16(b, classIN)
		b = binary.BigEndian.AppendUint32(b, ttl)
		b = binary.BigEndian.AppendUint16(b, 4)
		v := ip.As4()
		b = append(b, v[:]...)
		n++
	}
	binary.BigEndian.PutUint16(b[2:4], flags)
	binary.BigEndian.PutUint16(b[6:8], uint16(n))
	return b
}
