package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDaemonBackground: `cornus daemon docker -d` runs the proxy in the
// background, `daemon status` sees it answering, `daemon stop` ends it
// (issue #4).
func TestDaemonBackground(t *testing.T) {
	daemon(t)
	p := newProject(t, "services: {}\n")
	sock := "unix://" + filepath.Join(p.dir, "bg.sock")
	// A state dir of its own: a cornus daemon the user runs on this
	// machine must not collide with the test's (issue 16).
	p.env = append(p.env, "CORNUS_STATE_DIR="+filepath.Join(p.dir, "state"))
	out := p.must("daemon", "docker", "-d", "--listen", sock)
	t.Cleanup(func() { p.run("daemon", "stop") })
	if !strings.Contains(out, "export DOCKER_HOST="+sock) {
		t.Errorf("daemon -d said %q", out)
	}
	if st := p.must("daemon", "status"); !strings.Contains(st, "running") || !strings.Contains(st, "answering") {
		t.Errorf("status: %q", st)
	}
	if _, errOut, code := p.run("daemon", "docker", "-d", "--listen", sock); code == 0 || !strings.Contains(errOut, "already running") {
		t.Errorf("second -d: exit %d %q", code, errOut)
	}
	p.must("daemon", "stop")
	if st, _, code := p.run("daemon", "status"); code != 3 || !strings.Contains(st, "not running") {
		t.Errorf("status after stop: exit %d %q", code, st)
	}
}
