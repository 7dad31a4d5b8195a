package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// composeBinary is docker compose v5.6.0 (scripts/docker-compose.sh builds
// it once and caches it), or a failure (CI) / skip.
func composeBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../scripts/docker-compose.sh").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("scripts/docker-compose.sh: %v", err)
		}
		t.Skipf("docker compose unavailable (scripts/docker-compose.sh: %v)", err)
	}
	return strings.TrimSpace(string(out))
}

// runDockerCompose runs docker compose dc with args in p's directory and
// environment: its stdout and exit code.
func runDockerCompose(t *testing.T, dc string, p *project, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(dc, args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	var out strings.Builder
	cmd.Stdout = &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("docker compose %v: %v", args, err)
	}
	return out.String(), 0
}

// TestProjectsDockerComposeCreated (issue 17): a project docker compose
// created straight on dockerd is the same project to cornus — ps lists
// it, logs read it, down removes its containers and network — and a
// project with no containers is said to have none.
func TestProjectsDockerComposeCreated(t *testing.T) {
	onlyOn(t, "dockerhost", "docker compose creates the project straight on dockerd")
	b := daemon(t)
	loadImage(t)
	dc := composeBinary(t)
	p := newProject(t, `
services:
  db:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo db-ready; trap 'exit 0' TERM; while true; do sleep 0.2; done"]
  web:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
    depends_on: [db]
    scale: 2
`)
	compose := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(dc, append([]string{"--progress", "quiet", "-p", p.name}, args...)...)
		cmd.Dir, cmd.Env = p.dir, p.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docker compose %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(dc, "-p", p.name, "down", "-t", "1").Run() })
	compose("up", "-d")

	ps := p.must("compose", "-p", p.name, "ps")
	for _, name := range []string{p.name + "-db-1", p.name + "-web-1", p.name + "-web-2"} {
		if !strings.Contains(ps, name) {
			t.Errorf("cornus compose ps misses %s:\n%s", name, ps)
		}
	}
	if logs := p.must("compose", "-p", p.name, "logs", "db"); !strings.Contains(logs, "db-ready") {
		t.Errorf("cornus compose logs db: %q", logs)
	}
	_, errOut, code := p.run("compose", "-p", p.name, "down", "-t", "1")
	if code != 0 {
		t.Fatalf("cornus compose down: exit %d\n%s", code, errOut)
	}
	if cs, ns, vs := leftovers(t, b, p.name); cs+ns+vs != 0 {
		t.Fatalf("after cornus compose down: %d containers, %d networks, %d volumes left", cs, ns, vs)
	}
	if out := compose("ps", "-a", "-q"); strings.TrimSpace(out) != "" {
		t.Fatalf("docker compose still sees containers: %s", out)
	}

	// Nothing left: cornus says so (docker compose says nothing) and exits 0.
	for _, verb := range [][]string{{"down"}, {"ps"}, {"stop"}} {
		out, errOut, code := p.run(append([]string{"compose", "-p", p.name}, verb...)...)
		if code != 0 || !strings.Contains(errOut, "no containers for project "+p.name) {
			t.Errorf("%v on an empty project: exit %d\nstdout %q\nstderr %q", verb, code, out, errOut)
		}
	}
}
