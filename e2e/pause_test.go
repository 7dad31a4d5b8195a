package e2e

import (
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestComposePause: `compose pause` / `unpause` (issue 26) freeze and
// thaw a service's containers, as ps shows; a backend that cannot pause
// says so by name and leaves them running.
func TestComposePause(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	p := newProject(t, runCompose)
	p.must("compose", "up", "-d", "db")
	state := func() string {
		return strings.TrimSpace(p.must("compose", "ps", "-a", "--format", "{{.State}}", "db"))
	}
	if refusedWithout(t, b, backends.FeaturePause, "pause", p, "compose", "pause", "db") {
		if s := state(); s != "running" {
			t.Fatalf("after a refused pause db is %s", s)
		}
		return
	}
	p.must("compose", "pause", "db")
	if s := state(); s != "paused" {
		t.Fatalf("after pause db is %s", s)
	}
	p.must("compose", "unpause")
	if s := state(); s != "running" {
		t.Fatalf("after unpause db is %s", s)
	}
}
