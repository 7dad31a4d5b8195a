package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// Issue 30, item 4: one companion, many roles. A service with a
// client-local mount, an egress policy in proxy mode, a credential and
// the docker endpoint, two replicas: one companion per replica, each
// doing all four.
func TestRemoteModeOneCompanionManyRoles(t *testing.T) {
	skipBesideTheApp(t, "a client-local mount, a credential")
	if daemon(t).Capabilities().Sidecars {
		t.Skip("the caretaker is its pod's sidecar here: one per replica by construction (TestSidecarLocalMounts, TestRemoteModeCredentials)")
	}
	srv := startRemoteServer(t)
	b := daemon(t)
	dockerRoleImage(t)
	p := newProject(t, `
services:
  app:
    image: `+dockerRoleRef+`
    init: true
    deploy: {replicas: 2}
    volumes: ["./src:/src:ro"]
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
    x-cornus-egress:
      mode: proxy
      rules: [{pattern: "10.255.255.1:9", route: deny}]
      default: cluster
    x-cornus-credentials:
      - name: tok
        source: {env: ONE_TOK}
    x-cornus-docker: true
`, append(srv.env(), "ONE_TOK=one-companion-token")...)
	if err := os.Mkdir(filepath.Join(p.dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(p.dir, "src", "seed"), "from the client\n")
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	cs, err := b.List(context.Background(), backends.ListOptions{Labels: map[string]string{backends.ComposeProject: p.name}})
	if err != nil {
		t.Fatal(err)
	}
	var companions []string
	for _, c := range cs {
		if strings.HasSuffix(c.Name, "-caretaker") {
			companions = append(companions, c.Name)
		}
	}
	if len(cs) != 4 || len(companions) != 2 {
		t.Fatalf("%d containers, companions %v: want 2 replicas with one companion each", len(cs), companions)
	}
	for _, replica := range []string{"1", "2"} {
		run := func(script string) (string, int) {
			out, errOut, code := p.run("compose", "exec", "-T", "--index", replica, "app", "sh", "-c", script)
			return out + errOut, code
		}
		if out, _ := run("cat /src/seed /run/cornus-credentials/tok"); out != "from the client\none-companion-token" {
			t.Errorf("replica %s: the mount and the credential read %q", replica, out)
		}
		if out, code := run("wget -q -O- http://10.255.255.1:9/"); code == 0 || !strings.Contains(out, "403") {
			t.Errorf("replica %s: a denied destination through the egress proxy: exit %d, %q", replica, code, out)
		}
		if out, code := run("docker-compose ls --all"); code != 0 || !strings.Contains(out, p.name) {
			t.Errorf("replica %s: docker compose ls through the docker endpoint: exit %d, %q", replica, code, out)
		}
	}
	p.must("compose", "--progress", "quiet", "down")
	if m := mountedFor(t, p.name); len(m) != 0 {
		t.Errorf("still mounted after down: %v", m)
	}
	if c, _, v := leftovers(t, b, p.name); c != 0 || v != 0 {
		t.Errorf("%d containers, %d volumes after down", c, v)
	}
}
