package server

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// A run is admitted as an up: bob cannot run in alice's project, run
// alice's image in his own, or bind a host path the policy refuses; and
// nothing of a refused run is left. Alice's own run gives her its output
// and exit code.
func TestRunTenancy(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	alices := uniqueProject("alice-run-")
	ts.upAs(ts.alice, sleeperProject(alices))
	t.Cleanup(func() { ts.down(alices) })
	aliceImage := "cornus-test/alice-run-" + uniqueProject("") + ":1"
	t.Cleanup(func() { ts.removeImage(aliceImage) })
	if code, body := ts.load(ts.alice, imageArchive(t, aliceImage, "alice")); code != 200 {
		t.Fatalf("alice's load: %d %s", code, body)
	}

	var out bytes.Buffer
	p := sleeperProject(alices)
	app := p.Services["app"]
	app.Command = []string{"sh", "-c", "echo alice-ran; exit 4"}
	p.Services["app"] = app
	res, err := ts.projectsOf(ts.alice).Run(ctx, p, engine.RunOptions{Service: "app", Remove: true, Stdout: &out})
	if err != nil || res.ExitCode != 4 || strings.TrimSpace(out.String()) != "alice-ran" {
		t.Fatalf("alice's run: %+v %v, output %q", res, err, out.String())
	}

	bobs := uniqueProject("bob-run-")
	t.Cleanup(func() { ts.down(bobs) })
	withImage := sleeperProject(bobs)
	a := withImage.Services["app"]
	a.Image = aliceImage
	withImage.Services["app"] = a
	withBind := sleeperProject(bobs)
	a = withBind.Services["app"]
	a.Mounts = []spec.Mount{{Source: "/etc", Target: "/host-etc"}}
	withBind.Services["app"] = a
	for _, c := range []struct {
		name string
		p    spec.Project
		says string
	}{
		{"in alice's project", sleeperProject(alices), ""},
		{"alice's image", withImage, "another tenant's"},
		{"a host path", withBind, "/etc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ts.projectsOf(ts.bob).Run(ctx, c.p, engine.RunOptions{Service: "app", Remove: true, Stdout: &out})
			if !errdefs.IsPermissionDenied(err) && !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("want a refusal saying %q, got %v", c.says, err)
			}
		})
	}
	if n := len(ts.containers(bobs)); n != 0 {
		t.Fatalf("bob's refused runs left %d containers", n)
	}
	if n := len(ts.containers(alices)); n != 1 {
		t.Fatalf("alice's project has %d containers after bob's attempts and her --rm run, want her replica alone", n)
	}
}
