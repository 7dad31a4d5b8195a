package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestComposeLs: `compose ls` (issue 26) lists running projects with
// their containers' states and Compose files, all of them with -a, names
// with -q, as JSON with --format json, narrowed by --filter name=;
// through a server only the tenant's own.
func TestComposeLs(t *testing.T) {
	daemon(t)
	loadImage(t)
	srv := startServer(t, t.TempDir())
	eachWay(t, srv, func(t *testing.T, env []string) {
		p := newProject(t, runCompose, env...)
		p.must("compose", "up", "-d", "db")
		if out := p.must("compose", "ls", "--filter", "name="+p.name); !strings.Contains(out, p.name+"   running(1)") {
			t.Fatalf("ls of a running project:\n%s", out)
		}
		p.must("compose", "stop", "-t", "1")
		if out := p.must("compose", "ls", "-q"); strings.Contains(out, p.name) {
			t.Fatalf("ls without -a lists a stopped project:\n%s", out)
		}
		var rows []struct{ Name, Status, ConfigFiles string }
		out := p.must("compose", "ls", "-a", "--format", "json", "--filter", "name="+p.name)
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Name != p.name || rows[0].Status != "exited(1)" ||
			rows[0].ConfigFiles != filepath.Join(p.dir, "compose.yaml") {
			t.Fatalf("ls -a --format json: %v\n%s", err, out)
		}
	})
	// The server lists the tenant's projects only: not the local one of
	// the same machine's that nobody deployed through it.
	local := newProject(t, runCompose)
	local.must("compose", "up", "-d", "db")
	remote := newProject(t, runCompose, srv.env()...)
	if out := remote.must("compose", "ls", "-a", "-q"); strings.Contains(out, local.name) {
		t.Fatalf("the server's ls shows a project that is not the tenant's:\n%s", out)
	}
}
