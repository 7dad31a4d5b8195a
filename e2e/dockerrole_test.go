package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// dockerRoleRef is the busybox test image with docker compose (the
// standalone binary scripts/docker-compose.sh builds) at
// /bin/docker-compose.
const dockerRoleRef = "cornus-test/dockerrole:1"

// Issue 30, item 2: the docker role. docker compose, run inside a
// workload that asked for a docker endpoint, deploys a sibling on the
// same server through the socket its caretaker serves (DOCKER_HOST), as
// the deploying tenant: the sibling is the tenant's project (the client
// sees it through the server), the host policy refuses a privileged
// sibling, the endpoint sees none of another project's containers but
// the tenant's, and down inside removes what up made.
func TestRemoteModeDockerRole(t *testing.T) {
	srv := startRemoteServer(t)
	b := daemon(t)
	dockerRoleImage(t)
	sfx := make([]byte, 3)
	_, _ = rand.Read(sfx)
	sib := "sib" + hex.EncodeToString(sfx)
	t.Cleanup(func() { removeProject(t, b, sib) })

	p := newProject(t, `
services:
  dev:
    image: `+dockerRoleRef+`
    init: true
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
    x-cornus-docker: true
`, srv.env()...)
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	if got := p.must("compose", "exec", "-T", "dev", "sh", "-c", "echo $DOCKER_HOST"); strings.TrimSpace(got) != "unix:///run/cornus-docker/docker.sock" {
		t.Errorf("DOCKER_HOST in the app: %q", got)
	}
	inside := func(compose string, args ...string) (string, string, int) {
		script := "mkdir -p /tmp/" + sib + " && cd /tmp/" + sib + " && cat > compose.yaml && exec docker-compose -p " + sib + " " + strings.Join(args, " ")
		return p.runIn(strings.NewReader(compose), "compose", "exec", "-T", "dev", "sh", "-c", script)
	}
	sibling := `services:
  web:
    image: ` + image + `
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
`
	if out, errOut, code := inside(sibling, "up", "-d"); code != 0 {
		t.Fatalf("docker compose up inside the workload: %d\n%s%s\nserver:\n%s", code, out, errOut, srv.logs.String())
	}
	ps, _, _ := inside(sibling, "ps", "--format", "'{{.Service}} {{.State}}'")
	t.Logf("ps inside: %q", ps)
	if !strings.Contains(ps, "web running") {
		t.Errorf("docker compose ps inside: %q", ps)
	}
	// Attached, as a developer runs it: the sibling's output streams back
	// (attach) and its exit ends the up (events, wait).
	once := `services:
  once:
    image: ` + image + `
    command: ["sh", "-c", "echo hello-from-sibling; sleep 1"]
`
	attached := "mkdir -p /tmp/once && cd /tmp/once && cat > compose.yaml && docker-compose -p " + sib + "a up --abort-on-container-exit 2>&1; docker-compose -p " + sib + "a down 2>&1"
	t.Cleanup(func() { removeProject(t, b, sib+"a") })
	if out, errOut, _ := p.runIn(strings.NewReader(once), "compose", "exec", "-T", "dev", "sh", "-c", attached); !strings.Contains(out, "| hello-from-sibling") || !strings.Contains(out, "exited with code 0") {
		t.Errorf("docker compose up, attached, inside the workload:\n%s%s", out, errOut)
	}
	// The sibling is the tenant's: its client sees it through the server.
	if got := p.must("compose", "ls"); !strings.Contains(got, sib) {
		t.Errorf("cornus ls through the server does not list the sibling project %s:\n%s", sib, got)
	}
	// The endpoint shows the tenant's containers only: its own app, the
	// sibling, never the caretaker companions.
	names, _, _ := inside(sibling, "ps", "-a", "--format", "'{{.Name}}'")
	if strings.Contains(names, "caretaker") {
		t.Errorf("the endpoint lists a caretaker companion: %q", names)
	}

	privileged := `services:
  root:
    image: ` + image + `
    privileged: true
    command: ["sleep", "60"]
`
	out, errOut, code := inside(privileged, "up", "-d")
	t.Logf("privileged: %d %s%s", code, out, errOut)
	if code == 0 || !strings.Contains(out+errOut, "Privileged") {
		t.Errorf("a privileged sibling: exit %d, %s%s", code, out, errOut)
	}
	if n := countContainers(t, b, sib, "root"); n != 0 {
		t.Errorf("the refused privileged service has %d containers", n)
	}

	if out, errOut, code := inside(privileged, "down", "--remove-orphans"); code != 0 {
		t.Errorf("docker compose down inside: %d\n%s%s", code, out, errOut)
	}
	if c, n, v := leftovers(t, b, sib); c != 0 || n != 0 || v != 0 {
		t.Errorf("after down inside: %d containers, %d networks, %d volumes", c, n, v)
	}
	p.must("compose", "--progress", "quiet", "down")
	if c, _, v := leftovers(t, b, p.name); c != 0 || v != 0 {
		t.Errorf("%d containers, %d volumes after down", c, v)
	}
}

// dockerRoleImage makes dockerRoleRef available to the backend.
func dockerRoleImage(t *testing.T) {
	t.Helper()
	bin, err := os.ReadFile(composeBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	loadTestImage(t, dockerRoleRef, map[string]string{"bin/docker-compose": string(bin)})
}

// countContainers counts project's containers of service.
func countContainers(t *testing.T, b backends.Backend, project, service string) int {
	t.Helper()
	cs, err := b.List(context.Background(), backends.ListOptions{All: true, Labels: map[string]string{backends.ComposeProject: project, backends.ComposeService: service}})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}

// removeProject removes what is left of project on b (a failed test's).
func removeProject(t *testing.T, b backends.Backend, project string) {
	ctx := context.Background()
	labels := map[string]string{backends.ComposeProject: project}
	cs, err := b.List(ctx, backends.ListOptions{All: true, Labels: labels})
	if err != nil {
		t.Errorf("clean up %s: %v", project, err)
	}
	for _, c := range cs {
		if err := b.Remove(ctx, c.ID, backends.RemoveOptions{Force: true, Volumes: true}); err != nil {
			t.Errorf("clean up %s: %v", c.Name, err)
		}
	}
	if n, err := backends.Want[backends.Networks](b, backends.FeatureNetworks, "networks"); err == nil {
		ns, _ := n.ListNetworks(ctx, backends.ListOptions{Labels: labels})
		for _, nw := range ns {
			if err := n.RemoveNetwork(ctx, nw.ID); err != nil {
				t.Errorf("clean up network %s: %v", nw.Name, err)
			}
		}
	}
	vs, _ := b.ListVolumes(ctx, backends.ListOptions{Labels: labels})
	for _, v := range vs {
		if err := b.RemoveVolume(ctx, v.Name, true); err != nil {
			t.Errorf("clean up volume %s: %v", v.Name, err)
		}
	}
}
