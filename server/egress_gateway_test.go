package server

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/egress/netguard"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// The gateway route dials none of the server's own network: a tenant's
// policy sending everything to the gateway reaches no listener on the
// server's loopback, by address or by name, nor the server's own
// addresses, until the operator's CORNUS_EGRESS_GATEWAY_ALLOW names the
// address. (Security round 2, item 13b.)
func TestGatewayRefusesOwnNetwork(t *testing.T) {
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

	s := &Server{cfg: Config{Environ: []string{EnvEgressGateway + "=1"}}, policies: newPolicies(t.TempDir()), log: slog.New(slog.DiscardHandler)}
	p := spec.Project{Name: "gateway-own", Services: map[string]spec.App{
		"app": {Egress: &spec.Egress{Rules: []spec.EgressRule{{Pattern: "*", Route: egress.Gateway}}}},
	}}
	if err := s.policies.set(p); err != nil {
		t.Fatal(err)
	}
	defer s.policies.forget(p.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func(dest string) error {
		a, b := net.Pipe()
		go s.serveRelayStream(ctx, grant{Project: p.Name}, b)
		c, err := api.OpenStream(a, api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{Service: "app", Dest: dest, Route: egress.Gateway}}, 20*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	// Only destinations on this machine: were the check to fail, no
	// traffic would leave it (netguard's tests cover the metadata
	// service, link-local, multicast without dialing).
	refused := []string{"127.0.0.1:" + port, "localhost:" + port, "[::ffff:127.0.0.1]:" + port, "127.1.2.3:" + port, "[::1]:" + port,
		"0.0.0.0:" + port, "[::]:" + port}
	if own, err := netguard.InterfaceAddrs(); err == nil {
		for _, a := range own {
			if egress.Local(a) == "" {
				refused = append(refused, net.JoinHostPort(a.String(), port))
				break
			}
		}
	}
	for _, dest := range refused {
		err := open(dest)
		if err == nil || !errdefs.IsPermissionDenied(err) || !strings.Contains(err.Error(), EnvEgressGatewayAllow) {
			t.Errorf("gateway to %s: %v, want a refusal naming %s", dest, err, EnvEgressGatewayAllow)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the server's loopback listener saw %d connections", n)
	}

	// The operator's allow-list opens the address it names, no other.
	s.cfg.Environ = append(s.cfg.Environ, EnvEgressGatewayAllow+"=10.0.0.0/8, 127.0.0.1")
	if err := open("127.0.0.1:" + port); err != nil {
		t.Fatalf("gateway to an allowed address: %v", err)
	}
	if err := open("[::1]:" + port); err == nil || !errdefs.IsPermissionDenied(err) {
		t.Fatalf("gateway to ::1, not allowed: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for accepted.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the allowed connection never arrived (%d)", accepted.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.cfg.Environ = append(s.cfg.Environ, EnvEgressGatewayAllow+"=127.0.0.1/33")
	if err := open("127.0.0.1:" + port); err == nil || !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), EnvEgressGatewayAllow) {
		t.Fatalf("a bad allow-list: %v, want a refusal naming %s", err, EnvEgressGatewayAllow)
	}
}
