package e2e

import (
	"strings"
	"testing"
)

// TestComposeVerbFlags: the flags of existing verbs that issue 26 adds,
// on the lane's backend: ps --status and --filter status=, logs --index,
// --no-log-prefix and --until, config --images, up --scale and
// --wait-timeout, and the scale verb.
func TestComposeVerbFlags(t *testing.T) {
	daemon(t)
	loadImage(t)
	p := newProject(t, jobCompose("echo job-said-this"))
	if got := p.must("compose", "config", "--images"); got != strings.Repeat("cornus-test/busybox:1\n", 3) {
		t.Fatalf("config --images: %q", got)
	}
	p.must("compose", "up", "-d", "job", "db")
	p.must("compose", "wait", "job")
	if got := strings.TrimSpace(p.must("compose", "ps", "--status", "exited", "--format", "{{.Service}}")); got != "job" {
		t.Fatalf("ps --status exited: %q", got)
	}
	if got := strings.TrimSpace(p.must("compose", "ps", "--filter", "status=running", "--format", "{{.Service}}")); got != "db" {
		t.Fatalf("ps --filter status=running: %q", got)
	}
	if _, errOut, code := p.run("compose", "ps", "--status", "sleeping"); code == 0 || !strings.Contains(errOut, `status "sleeping"`) {
		t.Fatalf("ps --status of no state: exit %d\n%s", code, errOut)
	}
	if got := p.must("compose", "logs", "--no-log-prefix", "--index", "1", "db"); strings.TrimSpace(got) != "db-ready" {
		t.Fatalf("logs --no-log-prefix --index 1 db: %q", got)
	}
	if got := p.must("compose", "logs", "--index", "2", "db"); strings.TrimSpace(got) != "" {
		t.Fatalf("logs --index 2 of a one-replica service: %q", got)
	}
	if got := p.must("compose", "logs", "--until", "2000-01-01T00:00:00Z"); strings.Contains(got, "db-ready") {
		t.Fatalf("logs --until a time before the project: %q", got)
	}
	p.must("compose", "up", "-d", "--wait", "--wait-timeout", "60", "-y", "--scale", "db=2", "db")
	if got := strings.Fields(p.must("compose", "ps", "--format", "{{.Name}}", "db")); len(got) != 2 {
		t.Fatalf("up --scale db=2: %v", got)
	}
	if _, errOut, code := p.run("compose", "up", "-d", "--scale", "db"); code == 0 || !strings.Contains(errOut, "SERVICE=NUMBER") {
		t.Fatalf("up --scale without a number: exit %d\n%s", code, errOut)
	}
	p.must("compose", "scale", "db=1")
	if got := strings.Fields(p.must("compose", "ps", "--format", "{{.Name}}", "db")); len(got) != 1 || got[0] != p.name+"-db-1" {
		t.Fatalf("scale db=1: %v", got)
	}
}
