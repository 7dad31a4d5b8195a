package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// runCompose: app depends on db; app's port is published (run drops it
// unless told).
const runCompose = `services:
  db:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
  app:
    image: cornus-test/busybox:1
    depends_on: [db]
    environment: {GREETING: hello}
    command: ["sh", "-c", "echo from-the-service"]
`

// TestComposeRun: `compose run` on the lane's backend (issue 26): the
// command's output and exit code are run's, its dependencies start
// first, stdin reaches it, -e/-w/-u/--entrypoint override the service,
// --rm leaves nothing, -d prints the name of a one-off container that an
// up neither counts as a replica nor removes, and down removes it.
func TestComposeRun(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	runScenario(t, b, newProject(t, runCompose))
}

// TestComposeRunServer is TestComposeRun through cornus serve: the
// one-off's stdio rides a WebSocket, its exit code comes back.
func TestComposeRunServer(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	srv := startServer(t, t.TempDir())
	runScenario(t, b, newProject(t, runCompose, srv.env()...))
}

func runScenario(t *testing.T, b backends.Backend, p *project) {
	t.Helper()
	out, errOut, code := p.run("compose", "--progress", "quiet", "run", "--rm", "app", "sh", "-c", `echo "$GREETING"; exit 3`)
	if code != 3 || strings.TrimSpace(out) != "hello" {
		t.Fatalf("run --rm app: exit %d, stdout %q, want 3 and hello\n%s", code, out, errOut)
	}
	cs, _, _ := leftovers(t, b, p.name)
	if ps := p.must("compose", "ps", "-a", "--format", "{{.Name}} {{.State}}"); cs != 1 || !strings.Contains(ps, p.name+"-db-1 running") {
		t.Fatalf("after run --rm: %d containers, want db alone, running:\n%s", cs, ps)
	}

	out, errOut, code = p.runIn(strings.NewReader("from-stdin\n"), "compose", "--progress", "quiet", "run", "--rm", "-T", "app", "cat")
	if code != 0 || strings.TrimSpace(out) != "from-stdin" {
		t.Fatalf("run -T app cat: exit %d, stdout %q\n%s", code, out, errOut)
	}
	out = p.must("compose", "--progress", "quiet", "run", "--rm", "-e", "X=1", "-w", "/tmp", "-u", "1000", "--entrypoint", "sh -c", "app", `echo $X $(pwd) $(id -u)`)
	if strings.TrimSpace(out) != "1 /tmp 1000" {
		t.Fatalf("run with -e -w -u --entrypoint: %q", out)
	}

	name := strings.TrimSpace(p.must("compose", "--progress", "quiet", "run", "-d", "app", "sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"))
	if !strings.HasPrefix(name, p.name+"-app-run-") {
		t.Fatalf("run -d printed %q, want %s-app-run-…", name, p.name)
	}
	p.must("compose", "up", "-d")
	ps := p.must("compose", "ps", "-a", "--format", "{{.Name}}")
	for _, want := range []string{name, p.name + "-app-1", p.name + "-db-1"} {
		if !strings.Contains(ps, want) {
			t.Fatalf("after run -d and up, %s is missing:\n%s", want, ps)
		}
	}
	if _, errOut, code := p.run("compose", "run", "--rm", "nope"); code == 0 || !strings.Contains(errOut, "no such service: nope") {
		t.Fatalf("run of a missing service: exit %d\n%s", code, errOut)
	}
	p.must("compose", "down", "-t", "1")
	if cs, ns, _ := leftovers(t, b, p.name); cs+ns != 0 {
		t.Fatalf("after down: %d containers and %d networks left (the one-off too must go)", cs, ns)
	}
}

// TestComposeRunLikeDockerCompose compares run's output and exit code
// with docker compose v5.6.0's on the same project and daemon.
func TestComposeRunLikeDockerCompose(t *testing.T) {
	onlyOn(t, "dockerhost", "docker compose runs on dockerd")
	dc := composeBinary(t)
	loadImage(t)
	p := newProject(t, runCompose)
	t.Cleanup(func() { _ = exec.Command(dc, "-p", p.name, "down", "-t", "1").Run() })
	args := []string{"run", "--rm", "-e", "X=1", "app", "sh", "-c", `echo "$GREETING $X"; echo to-stderr >&2; exit 7`}
	out, _, code := p.run(append([]string{"compose", "--progress", "quiet"}, args...)...)
	dout, dcode := runDockerCompose(t, dc, p, append([]string{"--progress", "quiet"}, args...)...)
	if out != dout || code != dcode {
		t.Fatalf("cornus: exit %d, stdout %q; docker compose: exit %d, stdout %q", code, out, dcode, dout)
	}
}
