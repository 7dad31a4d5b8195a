package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
)

// Every address on the dialing machine's own network is refused, before
// any dial: loopback, link-local (the metadata service), unspecified and
// "this network", multicast, broadcast, the machine's own; an allow-list
// exempts what it names. (Security round 2, items 13b and 13e.)
func TestCheck(t *testing.T) {
	g := Guard{Own: func() ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("198.51.100.7")}, nil }}
	ctx := context.Background()
	for _, host := range []string{"127.0.0.1", "127.9.9.9", "::1", "[::1]", "::ffff:127.0.0.1", "169.254.169.254", "169.254.0.1",
		"fe80::1", "fe80::1%eth0", "0.0.0.0", "0.1.2.3", "::", "224.0.0.1", "ff02::1", "255.255.255.255", "198.51.100.7", "localhost"} {
		_, err := g.Check(ctx, host)
		var refused *RefusedError
		if !errdefs.IsPermissionDenied(err) || !errors.As(err, &refused) {
			t.Errorf("%s: %v, want refused", host, err)
		}
	}
	for _, host := range []string{"198.51.100.8", "10.1.2.3", "192.168.1.1", "2001:db8::1", "8.8.8.8"} {
		if _, err := g.Check(ctx, host); err != nil {
			t.Errorf("%s: %v, want it allowed", host, err)
		}
	}
	allowed := g
	allowed.Allowed = In([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("198.51.100.7/32")})
	for _, host := range []string{"127.0.0.1", "127.9.9.9", "198.51.100.7"} {
		if _, err := allowed.Check(ctx, host); err != nil {
			t.Errorf("%s, allowed: %v", host, err)
		}
	}
	if _, err := allowed.Check(ctx, "::1"); err == nil {
		t.Error("::1, not allowed: no error")
	}
	// One bad answer refuses the name.
	mixed := Guard{Lookup: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("198.51.100.8"), netip.MustParseAddr("127.0.0.1")}, nil
	}}
	if _, err := mixed.Check(ctx, "mixed.test"); !errdefs.IsPermissionDenied(err) {
		t.Errorf("a name answering a public and a loopback address: %v, want refused", err)
	}
}

// A name is resolved once and the address checked is the address dialed:
// a name whose next answer is the loopback (DNS rebinding) reaches the
// address it first answered, never the loopback.
func TestDialNoRebinding(t *testing.T) {
	allowedLn, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	defer allowedLn.Close()
	port := allowedLn.Addr().(*net.TCPAddr).Port
	loopLn, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Skipf("127.0.0.1:%d is taken: %v", port, err)
	}
	defer loopLn.Close()
	var allowedSeen, loopSeen atomic.Int32
	count := func(ln net.Listener, n *atomic.Int32) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}
	go count(allowedLn, &allowedSeen)
	go count(loopLn, &loopSeen)
	var lookups atomic.Int32
	g := Guard{
		Allowed: In([]netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}),
		Lookup: func(context.Context, string) ([]netip.Addr, error) {
			if lookups.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := g.Dial(ctx, egress.Destination{Host: "rebind.test", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if _, err := g.Dial(ctx, egress.Destination{Host: "rebind.test", Port: port}); !errdefs.IsPermissionDenied(err) {
		t.Fatalf("the second dial, the name now answering the loopback: %v, want refused", err)
	}
	for allowedSeen.Load() != 1 {
		if ctx.Err() != nil {
			t.Fatal("the first dial never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if loopSeen.Load() != 0 || lookups.Load() != 2 {
		t.Fatalf("loopback saw %d connections after %d lookups: want none, one lookup a dial", loopSeen.Load(), lookups.Load())
	}
}

func TestParseAllow(t *testing.T) {
	got, err := ParseAllow(" 10.0.0.0/8, 127.0.0.1 ,,::1,fe80::/10")
	if err != nil || len(got) != 4 || got[1].String() != "127.0.0.1/32" || got[2].String() != "::1/128" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "1.2.3"} {
		if _, err := ParseAllow(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
