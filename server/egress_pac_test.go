package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/egress/sandbox"
	"github.com/cornus-dev/cornus/spec"
)

// TestMain serves as the PAC sandbox's child when a test's sandbox
// starts this binary with sandbox.Subcommand. It refuses to be a
// backend's per-container monitor (bare, containerd start one from their
// own executable): running the tests again in each would never end.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "monitor" {
		fmt.Fprintln(os.Stderr, "the server's test binary is no container monitor: set CORNUS_MONITOR_BINARY to a built cornus to run these tests on the bare or containerd backend")
		os.Exit(2)
	}
	if sandbox.IsChild(os.Args) {
		if err := sandbox.Main(context.Background(), os.Environ()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Tenants' hostile PAC scripts, through the server's own policy path
// (policies.set, get, Decide): each decides deny within a bound, the
// scripts run in the sandbox's child (a crash there is the child's), and
// this process, the server, goes on deciding for a plain script.
// (Security round 2, item 12.)
func TestPolicyPACHostile(t *testing.T) {
	ps := newPolicies(t.TempDir())
	ps.pac = sandbox.New(sandbox.Options{Command: sandbox.SelfCommand})
	t.Cleanup(func() { _ = ps.pac.Close() })
	const body = `function FindProxyForURL(url, host) { %s; return "CLIENT"; }`
	hostile := map[string]string{
		// Backtracking: regexp2 runs it, and goja's interrupt never reaches
		// the matcher. Its timeout answers "no match": the script would
		// then say CLIENT, were the run not denied.
		"regex-backref":    `if (/^(a+)+\1$/.test("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")) return "DIRECT"`,
		"regex-lookahead":  `if (/^(?=(a+)+$)a/.test("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")) return "DIRECT"`,
		"array-buffer":     `new ArrayBuffer(1e12)`,
		"repeat":           `"x".repeat(Math.pow(2, 30))`,
		"growing-array":    `var a = []; for (;;) a.push("grow" + a.length)`,
		"json-of-4096-MiB": `var s = "x".repeat(1 << 20), a = []; for (var i = 0; i < 4096; i++) a.push(s); JSON.stringify(a)`,
	}
	p := spec.Project{Name: "pac-hostile", Services: map[string]spec.App{
		"plain": {Egress: &spec.Egress{Script: fmt.Sprintf(body, `if (shExpMatch(host, "*.corp.example")) return "DIRECT"`)}},
	}}
	for name, src := range hostile {
		p.Services[name] = spec.App{Egress: &spec.Egress{Script: fmt.Sprintf(body, src)}}
	}
	if err := ps.set(p); err != nil {
		t.Fatal(err)
	}
	defer ps.forget(p.Name)
	if ps.pac.Pid() == 0 {
		t.Fatal("the scripts compiled without a sandbox child")
	}
	d, _ := egress.ParseDestination("api.example.com:443")
	decide := func(service string) egress.Decision {
		t.Helper()
		pol, err := ps.get(p.Name, service)
		if err != nil || pol == nil {
			t.Fatalf("%s: policy %v, %v", service, pol, err)
		}
		got := make(chan egress.Decision, 1)
		go func() { got <- pol.Decide(d) }()
		select {
		case dec := <-got:
			return dec
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no decision within 30s", service)
			return egress.Decision{}
		}
	}
	for name := range hostile {
		if got := decide(name); got.Route != egress.Deny {
			t.Errorf("%s: %s (%s), want deny", name, got.Route, got.By)
		} else {
			t.Logf("%s: %s", name, got.By)
		}
	}
	if got := decide("plain"); got.Route != egress.Client {
		t.Fatalf("plain script after the hostile ones: %+v", got)
	}
	if got := decide("plain"); !strings.HasPrefix(got.By, "PAC: ") {
		t.Fatalf("plain script: decided by %q", got.By)
	}
}
