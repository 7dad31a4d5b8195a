package e2e

import (
	"strings"
	"testing"
)

// TestComposeVolumes: compose volumes lists the project's volumes, a
// service's alone with its name; locally and through a server.
func TestComposeVolumes(t *testing.T) {
	daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, `services:
  a:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
    volumes: [data:/data, cache:/cache]
  b:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
    volumes: [cache:/cache]
volumes:
  data: {}
  cache: {}
`, env...)
		p.must("compose", "up", "-d")
		if got, want := p.must("compose", "volumes", "-q"), p.name+"_cache\n"+p.name+"_data\n"; got != want {
			t.Fatalf("volumes -q: %q, want %q", got, want)
		}
		table := strings.Split(strings.TrimSpace(p.must("compose", "volumes", "b")), "\n")
		if len(table) != 2 || !strings.HasPrefix(table[0], "DRIVER") || !strings.HasSuffix(table[1], " "+p.name+"_cache") {
			t.Fatalf("volumes b: %q", table)
		}
		if got := p.must("compose", "volumes", "--format", "{{.Name}}", "a"); got != p.name+"_cache\n"+p.name+"_data\n" {
			t.Fatalf("volumes --format {{.Name}} a: %q", got)
		}
		if _, errOut, code := p.run("compose", "volumes", "nope"); code == 0 || !strings.Contains(errOut, "no such service: nope") {
			t.Fatalf("volumes nope: exit %d\n%s", code, errOut)
		}
	})
}
