package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestComposeExportCommit: compose export writes a service container's
// filesystem as a tar (stdout or -o, --index picks the replica), commit
// makes an image of one that a service then runs, with the changes
// asked; a replica the service lacks fails and leaves no file. A backend
// without them says so by name. Locally and through a server; on
// dockerd the tar holds what docker compose export's does.
func TestComposeExportCommit(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, cpCompose, env...)
		p.must("compose", "up", "-d")
		p.must("compose", "exec", "-T", "--index", "2", "app", "sh", "-c", "echo two > /tmp/mark.txt")
		ref := "cornus-test/committed-" + p.name + ":1"
		if refusedWithout(t, b, backends.FeatureExport, "export", p, "compose", "export", "-o", filepath.Join(p.dir, "x.tar"), "app") {
			refusedWithout(t, b, backends.FeatureCommit, "commit", p, "compose", "commit", "app", ref)
			return
		}
		two := tarNames(t, p.must("compose", "export", "--index", "2", "app"))
		if !slices.Contains(two, "tmp/mark.txt") || !slices.Contains(two, "bin/sh") {
			t.Fatalf("export --index 2 app: %d entries, without tmp/mark.txt or bin/sh", len(two))
		}
		out := filepath.Join(p.dir, "one.tar")
		p.must("compose", "export", "-o", out, "app")
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if one := tarNames(t, string(data)); slices.Contains(one, "tmp/mark.txt") || !slices.Contains(one, "bin/sh") {
			t.Errorf("export -o FILE app (replica 1): %d entries, tmp/mark.txt among them or bin/sh not", len(one))
		}
		missing := filepath.Join(p.dir, "three.tar")
		if _, errOut, code := p.run("compose", "export", "--index", "3", "-o", missing, "app"); code == 0 || !strings.Contains(errOut, "no container 3") {
			t.Errorf("export --index 3: exit %d\n%s", code, errOut)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Error("a failed export left its -o file")
		}
		if len(env) == 0 && b.Name() == "dockerhost" {
			dc := composeBinary(t)
			theirs, code := runDockerCompose(t, dc, p, "--progress", "quiet", "export", "--index", "2", "app")
			if names := tarNames(t, theirs); code != 0 || !slices.Equal(names, two) {
				t.Errorf("docker compose export --index 2 app: exit %d, %d entries; cornus's: %d", code, len(names), len(two))
			}
		}

		if !b.Capabilities().Has(backends.FeatureCommit) {
			refusedWithout(t, b, backends.FeatureCommit, "commit", p, "compose", "commit", "app", ref)
			return
		}
		imgs, _ := backends.Want[backends.Images](b, backends.FeatureImages, "images")
		t.Cleanup(func() { _ = imgs.RemoveImage(context.Background(), ref, true) })
		p.must("compose", "commit", "--index", "2", "-c", "ENV COMMITTED=yes", "-m", "from e2e", "-a", "e2e", "app", ref)
		again := newProject(t, `services:
  again:
    image: `+ref+`
    command: ["sh", "-c", "cat /tmp/mark.txt; echo $$COMMITTED"]
`, env...)
		if got := again.must("compose", "run", "--rm", "-T", "again"); got != "two\nyes\n" {
			t.Errorf("a service of the committed image: %q", got)
		}
		if _, errOut, code := p.run("compose", "commit", "nosuch", ref); code == 0 || !strings.Contains(errOut, "nosuch") {
			t.Errorf("commit of a service that does not exist: exit %d\n%s", code, errOut)
		}
	})
}
