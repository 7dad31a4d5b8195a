package kubernetes

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSearchScript: connecting a running pod to a network adds the
// network's domain to its resolver's search line, disconnecting drops it,
// the rest of the file kept (the contract's connect case: the connected
// container reaches a peer by name).
func TestSearchScript(t *testing.T) {
	f := filepath.Join(t.TempDir(), "resolv.conf")
	const start = "search ns.svc.cluster.local svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
	if err := os.WriteFile(f, []byte(start), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(add, drop, want string) {
		t.Helper()
		if out, err := exec.Command("sh", "-c", searchScript, "sh", add, drop, f).CombinedOutput(); err != nil {
			t.Fatalf("add %q drop %q: %v: %s", add, drop, err, out)
		}
		if got, _ := os.ReadFile(f); string(got) != want {
			t.Fatalf("add %q drop %q:\n%s\nwant:\n%s", add, drop, got, want)
		}
	}
	run("back.ns.svc.cluster.local", "", "search ns.svc.cluster.local svc.cluster.local back.ns.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n")
	run("back.ns.svc.cluster.local", "", "search ns.svc.cluster.local svc.cluster.local back.ns.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n")
	run("", "back.ns.svc.cluster.local", start)
	if err := os.WriteFile(f, []byte("nameserver 10.96.0.10"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("back.ns.svc.cluster.local", "", "nameserver 10.96.0.10\nsearch back.ns.svc.cluster.local\n")
}
