package client

import (
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// The client's end of the client route dials none of the developer's own
// network for a wildcard rule: a listener on the client's loopback sees
// no connection from "*" (by address or by name), and sees one when the
// rule names it (its address or its name, with the port). (Security round
// 2, item 13e.)
func TestEgressRefusesOwnLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	compile := func(pattern string) *egress.Policy {
		p, err := egress.Compile(&spec.Egress{Rules: []spec.EgressRule{{Pattern: pattern, Route: egress.Client}}, Default: egress.Deny}, "test", egress.PACOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	h := EgressHandler(map[string]*egress.Policy{
		"wild": compile("*"), "cidr": compile("0.0.0.0/0"), "byIP": compile("127.0.0.1:" + port), "byName": compile("localhost:" + port),
	}, nil)
	open := func(service, dest string) error {
		a, b := net.Pipe()
		go func() {
			hdr, st, err := api.ReadHeader(b)
			if err != nil {
				b.Close()
				return
			}
			h(hdr, st)
		}()
		c, err := api.OpenStream(a, api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{Service: service, Dest: dest, Route: egress.Client}}, 20*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, tc := range []struct{ service, dest string }{
		{"wild", "127.0.0.1:" + port}, {"wild", "localhost:" + port}, {"wild", "[::ffff:127.0.0.1]:" + port},
		{"wild", "0.0.0.0:" + port}, {"cidr", "127.0.0.1:" + port},
	} {
		err := open(tc.service, tc.dest)
		if err == nil || !errdefs.IsPermissionDenied(err) || !strings.Contains(err.Error(), "names the destination") {
			t.Errorf("%s to %s: %v, want refused", tc.service, tc.dest, err)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the client's loopback listener saw %d connections from wildcard rules", n)
	}
	for i, tc := range []struct{ service, dest string }{{"byIP", "127.0.0.1:" + port}, {"byName", "localhost:" + port}} {
		if err := open(tc.service, tc.dest); err != nil {
			t.Fatalf("%s to %s: %v", tc.service, tc.dest, err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for accepted.Load() != int32(i+1) {
			if time.Now().After(deadline) {
				t.Fatalf("%s to %s: the listener saw %d connections", tc.service, tc.dest, accepted.Load())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
