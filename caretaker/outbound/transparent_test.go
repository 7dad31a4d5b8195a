package outbound

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// netns is a network namespace this test made (ip netns), removed at the
// end.
type netns string

func (n netns) path() string { return "/run/netns/" + string(n) }

func newNetns(t *testing.T, name string) netns {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("transparent mode tests need root (network namespaces, nftables)")
		}
		t.Skip("transparent mode tests need root (network namespaces, nftables)")
	}
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	run(t, "ip", "-n", name, "link", "set", "lo", "up")
	return netns(name)
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", args, err, out)
	}
}

// in runs fn on a thread inside n. Sockets fn creates stay in n.
func (n netns) in(t *testing.T, fn func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with its namespace changed
		f, err := os.Open(n.path())
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- err
			return
		}
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// TestTransparent proves the redirect and the original destination in
// namespaces of the test's own: "app" reaches a server in "far" over a
// veth; nftables in "app" sends its TCP to the caretaker's listener, which
// dials (marked, so not redirected again) or relays or refuses by policy.
func TestTransparent(t *testing.T) {
	sfx := make([]byte, 3)
	_, _ = rand.Read(sfx)
	id := hex.EncodeToString(sfx)
	app, far := newNetns(t, "cornus-ob-a-"+id), newNetns(t, "cornus-ob-f-"+id)
	run(t, "ip", "link", "add", "cob"+id, "netns", string(app), "type", "veth", "peer", "name", "cof"+id, "netns", string(far))
	run(t, "ip", "-n", string(app), "addr", "add", "10.231.7.1/30", "dev", "cob"+id)
	run(t, "ip", "-n", string(far), "addr", "add", "10.231.7.2/30", "dev", "cof"+id)
	run(t, "ip", "-n", string(app), "link", "set", "cob"+id, "up")
	run(t, "ip", "-n", string(far), "link", "set", "cof"+id, "up")

	// The far server answers with what it saw.
	var srv net.Listener
	if err := far.in(t, func() (err error) { srv, err = net.Listen("tcp", "10.231.7.2:8080"); return }); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "far saw %s", c.RemoteAddr())
			c.Close()
		}
	}()

	// The caretaker, in app: listener, redirect, marked cluster dials.
	var ln net.Listener
	if err := app.in(t, func() (err error) {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
		return Redirect(uint16(ln.Addr().(*net.TCPAddr).Port), nil)
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The relay stands for the client end: it dials from far, where the
	// server is local.
	relay := &fakeRelay{dial: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = far.in(t, func() (err error) { c, err = (&net.Dialer{}).DialContext(ctx, network, addr); return })
		return c, err
	}}
	var dials atomic.Int32
	router := &Router{Service: "app", Relay: relay, Dial: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		dials.Add(1)
		err = app.in(t, func() (err error) { c, err = MarkedDialer().DialContext(ctx, network, addr); return })
		return c, err
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = (&Transparent{Router: router, Proxy: &Proxy{}}).Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	get := func() (string, error) {
		var out string
		err := app.in(t, func() error {
			c, err := net.DialTimeout("tcp", "10.231.7.2:8080", 3*time.Second)
			if err != nil {
				return err
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			b, err := io.ReadAll(c)
			out = string(b)
			return err
		})
		return out, err
	}
	for _, tc := range []struct{ route, want string }{
		{egress.Cluster, "far saw 10.231.7.1:"},
		{egress.Deny, ""},
	} {
		router.Policy = policy(t, spec.Egress{Mode: spec.EgressTransparent, Rules: []spec.EgressRule{{Pattern: "10.231.7.0/24", Route: tc.route}}, Default: egress.Deny})
		out, err := get()
		if tc.want == "" {
			if out != "" {
				t.Fatalf("route %s: the app reached the far server: %q", tc.route, out)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(out, tc.want) || dials.Load() != 1 {
			t.Fatalf("route %s: %q, %v (caretaker dials: %d)", tc.route, out, err, dials.Load())
		}
	}
	// The client route leaves through the relay, with the original
	// destination (an IP: the app dialed one).
	router.Policy = policy(t, spec.Egress{Mode: spec.EgressTransparent, Rules: []spec.EgressRule{{Pattern: "10.231.7.2:8080", Route: egress.Client}}, Default: egress.Deny})
	out, err := get()
	if err != nil || !strings.HasPrefix(out, "far saw 10.231.7.2:") || relay.opened.Load() != 1 || relay.last.Load().(api.EgressOpen).Dest != "10.231.7.2:8080" {
		t.Fatalf("client route: %q, %v; relay opened %d times, last %+v", out, err, relay.opened.Load(), relay.last.Load())
	}
	if err := app.in(t, Unredirect); err != nil {
		t.Fatal(err)
	}
}
