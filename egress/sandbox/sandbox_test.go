package sandbox

import (
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/egress"
)

// selfChild is this test binary as the child (TestMain serves it).
func selfChild() (*exec.Cmd, error) { return SelfCommand() }

func newTestSandbox(t *testing.T, o Options) *Sandbox {
	t.Helper()
	if o.Command == nil {
		o.Command = selfChild
	}
	s := New(o)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

const plainPAC = `function FindProxyForURL(url, host) {
  if (host == "blocked.example.com") return "DENY";
  if (shExpMatch(host, "*.corp.example")) return "PROXY client; DIRECT";
  if (isInNet(host, "10.0.0.0", "255.0.0.0")) return "PROXY proxy.corp:3128";
  if (shExpMatch(host, "*.gw.example") && url.indexOf(":8443/") > 0) return "GATEWAY";
  if (/^(a|b)+\1$/.test(host)) return "CLIENT";
  return "DIRECT";
}`

var plainDests = []string{"blocked.example.com:443", "a.corp.example", "10.1.2.3:5432", "11.0.0.1", "svc.gw.example:8443",
	"svc.gw.example:443", "abab", "example.org:80", "[::1]:443", "intranet"}

// decideWithin runs p.Decide for d, failing the test if it has not
// answered within several seconds (a hang, not a slow answer).
func decideWithin(t *testing.T, p egress.Decider, dest string) egress.Decision {
	t.Helper()
	d, err := egress.ParseDestination(dest)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan egress.Decision, 1)
	go func() { got <- p.Decide(d, egress.Cluster) }()
	select {
	case dec := <-got:
		return dec
	case <-time.After(30 * time.Second):
		t.Fatalf("no decision for %s within 30s", dest)
		return egress.Decision{}
	}
}

// The sandbox decides what the same script decides in this process: the
// server agrees with the caretaker and the client.
func TestSandboxAgrees(t *testing.T) {
	s := newTestSandbox(t, Options{})
	remote, err := s.Load(plainPAC, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	local, err := egress.NewPAC(plainPAC, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for _, dest := range plainDests {
		r, l := decideWithin(t, remote, dest), decideWithin(t, local, dest)
		if r != l {
			t.Errorf("%s: the sandbox says %+v, this process %+v", dest, r, l)
		}
		routes[r.Route] = true
	}
	if len(routes) != 4 {
		t.Errorf("routes seen %v: the destinations should reach all four", routes)
	}
	if _, err := s.Load(`function FindProxyForURL(u, h) { return "DIRECT"`, egress.PACOptions{}); err == nil || !strings.Contains(err.Error(), "SyntaxError") {
		t.Errorf("a script that does not parse: %v", err)
	}
	if _, err := s.Load(`var x = 1;`, egress.PACOptions{}); err == nil || !strings.Contains(err.Error(), "FindProxyForURL") {
		t.Errorf("a script without FindProxyForURL: %v", err)
	}
}

// Scripts that crash their runtime (a fatal out-of-memory, a parser's
// stack overflow) kill only the child: their decision is deny, this
// process goes on, and the next child (restarted by itself) serves the
// scripts loaded before. (Security round 2, item 12.)
func TestSandboxSurvivesCrash(t *testing.T) {
	s := newTestSandbox(t, Options{Memory: 256 << 20})
	plain, err := s.Load(plainPAC, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := decideWithin(t, plain, "a.corp.example"); got.Route != egress.Client {
		t.Fatalf("plain script before: %+v", got)
	}
	first := s.Pid()
	// JSON.stringify builds 4 GiB natively from 4096 references to one
	// 1 MiB string: nothing in the runtime can stop it.
	oom, err := s.Load(`function FindProxyForURL(u, h) {
		var s = "x".repeat(1 << 20), a = [];
		for (var i = 0; i < 4096; i++) a.push(s);
		return JSON.stringify(a);
	}`, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := decideWithin(t, oom, "example.com:443")
	t.Logf("the crash: %s", got.By)
	// It dies of it, or (on a loaded machine) is killed on the way.
	if got.Route != egress.Deny || !strings.Contains(got.By, "died") && !strings.Contains(got.By, "no answer within") {
		t.Fatalf("a decision that exhausts the child's memory: %+v, want deny: the sandbox died", got)
	}
	// A destination not asked before: its answer is no remembered one.
	if got := decideWithin(t, plain, "b.corp.example"); got.Route != egress.Client {
		t.Fatalf("plain script after the crash: %+v", got)
	}
	if pid := s.Pid(); pid == first || pid == 0 {
		t.Fatalf("child pid %d, then %d: want a new child", first, pid)
	}
	// Nesting a million deep overflows the parser's stack, a fatal error:
	// the script is refused at load.
	_, err = s.Load("function FindProxyForURL(u, h) { return "+strings.Repeat("[", 1_000_000)+"; }", egress.PACOptions{})
	if err == nil || !errors.Is(err, errDied) && !errors.Is(err, errTimeout) {
		t.Fatalf("a script nested a million deep: %v, want the sandbox died loading it", err)
	}
	if got := decideWithin(t, plain, "10.1.2.3:5432"); got.Route != egress.Client {
		t.Fatalf("plain script after the second crash: %+v", got)
	}
}

// A decision stuck in native code past the deadline (indexOf over four
// billion holes never looks at goja's interrupt) is deny, and its child
// is killed and replaced.
func TestSandboxKillsStuck(t *testing.T) {
	s := newTestSandbox(t, Options{})
	stuck, err := s.Load(`function FindProxyForURL(u, h) { var a = []; a.length = 4e9; return a.indexOf(1) < 0 ? "DIRECT" : "CLIENT"; }`, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := s.Pid()
	got := decideWithin(t, stuck, "example.com:443")
	t.Logf("the stuck one: %s", got.By)
	if got.Route != egress.Deny || !strings.Contains(got.By, "no answer within") {
		t.Fatalf("a stuck decision: %+v, want deny: no answer", got)
	}
	plain, err := s.Load(plainPAC, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := decideWithin(t, plain, "a.corp.example"); got.Route != egress.Client {
		t.Fatalf("plain script after the kill: %+v", got)
	}
	if pid := s.Pid(); pid == first {
		t.Fatalf("child pid %d still: want it killed", pid)
	}
}

// No child, no decisions: a sandbox whose child cannot start denies
// (fail closed), and serves again once it can.
func TestSandboxDownDenies(t *testing.T) {
	var broken atomic.Bool
	s := newTestSandbox(t, Options{Command: func() (*exec.Cmd, error) {
		if broken.Load() {
			return exec.Command("/bin/true"), nil // exits without a greeting
		}
		return selfChild()
	}})
	plain, err := s.Load(plainPAC, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	broken.Store(true)
	crash, err := s.Load(`function FindProxyForURL(u, h) { var s = "x".repeat(1 << 20), a = []; for (var i = 0; i < 8192; i++) a.push(s); return JSON.stringify(a); }`, egress.PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := decideWithin(t, crash, "example.com:443"); got.Route != egress.Deny {
		t.Fatalf("crash: %+v", got)
	}
	for _, dest := range []string{"a.corp.example", "10.1.2.3:5432"} {
		if got := decideWithin(t, plain, dest); got.Route != egress.Deny || !strings.Contains(got.By, "PAC sandbox") {
			t.Fatalf("%s with the sandbox down: %+v, want deny naming the sandbox", dest, got)
		}
	}
	broken.Store(false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := decideWithin(t, plain, "a.corp.example")
		if got.Route == egress.Client {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox did not come back: %+v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A test binary is no child by default: it would run its tests instead.
func TestDefaultCommandRefusesTestBinary(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if _, err := s.Load(plainPAC, egress.PACOptions{}); err == nil || !strings.Contains(err.Error(), "set sandbox.Options.Command") {
		t.Fatalf("the default command in a test binary: %v", err)
	}
}
