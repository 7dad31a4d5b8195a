package e2e

import (
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestComposePull: compose pull pulls each service's image: one on a
// registry that refuses connections (127.0.0.1:1) fails naming it, or is
// reported and passed over with --ignore-pull-failures; a service with a
// build section is reported, not failed, and left out with
// --ignore-buildable; --policy missing pulls nothing the backend has.
// Locally and through a server; where the nodes pull (kubernetes),
// nothing is pulled.
func TestComposePull(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, `services:
  here:
    image: cornus-test/busybox:1
  away:
    image: 127.0.0.1:1/cornus-test/away:1
  built:
    image: 127.0.0.1:1/cornus-test/built:1
    build: {context: .}
`, env...)
		writeFile(t, p.dir+"/Dockerfile", "FROM cornus-test/busybox:1\n")
		if !b.Capabilities().Has(backends.FeatureImages) {
			if out, errOut, code := p.run("compose", "--progress", "plain", "pull", "away"); code != 0 || !strings.Contains(errOut, "Skipped") {
				t.Fatalf("pull where the nodes pull: exit %d\n%s%s", code, out, errOut)
			}
			return
		}
		if refusedWithout(t, b, backends.FeaturePull, "pull", p, "compose", "pull", "away") {
			return
		}
		p.must("compose", "pull", "--policy", "missing", "here")
		// Named services only: here's image would be pulled from Docker
		// Hub, and tests reach no address but 127.0.0.1.
		if _, errOut, code := p.run("compose", "--progress", "plain", "pull", "away"); code == 0 || !strings.Contains(errOut, "127.0.0.1:1/cornus-test/away:1") {
			t.Fatalf("pull of an image on a closed port: exit %d\n%s", code, errOut)
		}
		_, errOut, code := p.run("compose", "--progress", "plain", "pull", "--ignore-pull-failures", "away", "built")
		if code != 0 || !strings.Contains(errOut, "away:1") || !strings.Contains(errOut, "built:1") {
			t.Fatalf("pull --ignore-pull-failures: exit %d\n%s", code, errOut)
		}
		_, errOut, code = p.run("compose", "--progress", "plain", "pull", "--ignore-buildable", "built")
		if code != 0 || strings.Contains(errOut, "built:1") {
			t.Fatalf("pull --ignore-buildable built: exit %d, want nothing pulled\n%s", code, errOut)
		}
		if _, errOut, code := p.run("compose", "pull", "built"); code != 0 {
			t.Fatalf("pull of a buildable service that cannot be pulled: exit %d, want a report only\n%s", code, errOut)
		}
	})
}
