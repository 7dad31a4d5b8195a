package e2e

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

const upFlagsCompose = `services:
  db:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
  app:
    image: cornus-test/busybox:1
    depends_on: [db]
    environment: {GREETING: "${GREETING:-v1}"}
    command: ["sh", "-c", "echo $$GREETING; trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
  tools:
    image: cornus-test/busybox:1
    profiles: [debug]
`

// TestComposeCreate: create (up --no-start) makes the containers and
// starts none; start starts them; up --no-recreate keeps a changed
// service's container, --always-recreate-deps recreates an unchanged
// dependency, --no-start --force-recreate recreates without starting,
// and contradicting flags are refused before anything. On the lane's
// backend, locally and through a server.
func TestComposeCreate(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, upFlagsCompose, env...)
		states := func() string {
			return strings.TrimSpace(p.must("compose", "ps", "-a", "--format", "{{.Service}}={{.State}}"))
		}
		ids := func() map[string]string {
			m := map[string]string{}
			for _, l := range strings.Fields(p.must("compose", "ps", "-a", "--format", "{{.Service}}={{.ID}}")) {
				k, v, _ := strings.Cut(l, "=")
				m[k] = v
			}
			return m
		}
		p.must("compose", "create")
		if got := states(); got != "app=created\ndb=created" {
			t.Fatalf("after create: %q, want both created", got)
		}
		if got := p.must("compose", "config", "--profiles"); got != "debug\n" {
			t.Fatalf("config --profiles: %q", got)
		}
		// config --hash is the hash a local up labelled the containers
		// with (a server's admission adds to what it deploys).
		cs, err := b.List(context.Background(), backends.ListOptions{Labels: map[string]string{backends.ComposeProject: p.name}, All: true})
		if err != nil {
			t.Fatal(err)
		}
		var labelled []string
		for _, c := range cs {
			labelled = append(labelled, c.App()+" "+c.Labels[backends.LabelConfigHash])
		}
		slices.Sort(labelled)
		if got := strings.Fields(p.must("compose", "config", "--hash", "*")); len(cs) != 2 || len(env) == 0 && strings.Join(got, " ") != strings.Join(labelled, " ") {
			t.Fatalf("config --hash '*': %q; the containers' labels: %q", got, labelled)
		}
		p.must("compose", "start")
		if got := states(); got != "app=running\ndb=running" {
			t.Fatalf("after start: %q", got)
		}
		before := ids()

		p.env = append(p.env, "GREETING=v2")
		p.must("compose", "up", "-d", "--no-recreate")
		if after := ids(); after["app"] != before["app"] || after["db"] != before["db"] {
			t.Fatalf("up --no-recreate replaced a container: %v, then %v", before, after)
		}
		if got := p.must("compose", "logs", "--no-log-prefix", "app"); strings.Contains(got, "v2") {
			t.Fatalf("up --no-recreate: the kept app said %q", got)
		}

		p.must("compose", "up", "-d", "--always-recreate-deps", "app")
		after := ids()
		if after["db"] == before["db"] || after["app"] == before["app"] {
			t.Fatalf("up --always-recreate-deps app: db %s then %s, app %s then %s (want both new)", before["db"], after["db"], before["app"], after["app"])
		}
		waitFor(t, 30*time.Second, "the recreated app's v2", func() bool {
			out, _, _ := p.run("compose", "logs", "--no-log-prefix", "app")
			return strings.TrimSpace(out) == "v2"
		})

		p.must("compose", "up", "-d", "--no-start", "--force-recreate", "db")
		if got := states(); got != "app=running\ndb=created" {
			t.Fatalf("up --no-start --force-recreate db: %q", got)
		}
		for _, bad := range [][]string{{"--force-recreate", "--no-recreate"}, {"--always-recreate-deps", "--no-recreate"}, {"--no-start", "--wait"}} {
			_, errOut, code := p.run(append([]string{"compose", "up", "-d"}, bad...)...)
			if code == 0 || !strings.Contains(errOut, bad[0]+" and "+bad[1]+" are incompatible") {
				t.Fatalf("up %v: exit %d\n%s", bad, code, errOut)
			}
		}
		if got := states(); got != "app=running\ndb=created" {
			t.Fatalf("a refused up changed the project: %q", got)
		}
	})
}

const abortCompose = `services:
  quick:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo quick-said-this; sleep 2; exit 3"]
  slow:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo slow-up; trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
`

// TestUpAbortOnContainerExit: foreground up with
// --abort-on-container-exit stops the project when quick exits and exits
// with quick's code; --exit-code-from slow exits with slow's (0, stopped);
// --no-attach leaves a service's output out, --timestamps stamps lines.
// On the lane's backend, locally and through a server.
func TestUpAbortOnContainerExit(t *testing.T) {
	daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, abortCompose, env...)
		out, errOut, code := p.run("compose", "up", "--abort-on-container-exit")
		if code != 3 || !strings.Contains(errOut, "Aborting on container exit...") {
			t.Fatalf("up --abort-on-container-exit: exit %d, want quick's 3\n%s\n%s", code, out, errOut)
		}
		for _, want := range []string{"Attaching to quick-1, slow-1", "quick-1 | quick-said-this", "slow-1  | slow-up", "quick-1 exited with code 3", "slow-1 exited with code 0"} {
			if !strings.Contains(out, want) {
				t.Errorf("up --abort-on-container-exit: no %q in\n%s", want, out)
			}
		}
		if got := strings.TrimSpace(p.must("compose", "ps", "-a", "--status", "running", "--format", "{{.Service}}")); got != "" {
			t.Fatalf("after the abort, still running: %q", got)
		}
		out, errOut, code = p.run("compose", "up", "--exit-code-from", "slow", "--no-attach", "slow", "--timestamps")
		if code != 0 || strings.Contains(out, "slow-up") || !strings.Contains(out, "Attaching to quick-1\n") {
			t.Fatalf("up --exit-code-from slow --no-attach slow: exit %d, want slow's 0, and no slow output\n%s\n%s", code, out, errOut)
		}
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
			return strings.HasPrefix(l, "quick-1 | 20") && strings.HasSuffix(l, "Z quick-said-this")
		}) {
			t.Fatalf("up --timestamps: no stamped line of quick in\n%s", out)
		}
		if _, errOut, code := p.run("compose", "up", "-d", "--abort-on-container-exit"); code == 0 || !strings.Contains(errOut, "incompatible") {
			t.Fatalf("up -d --abort-on-container-exit: exit %d\n%s", code, errOut)
		}
		if _, errOut, code := p.run("compose", "up", "--exit-code-from", "nope"); code == 0 || !strings.Contains(errOut, "no such service: nope") {
			t.Fatalf("up --exit-code-from nope: exit %d\n%s", code, errOut)
		}
	})
}

// TestUpAbortLikeDockerCompose compares up --abort-on-container-exit and
// --exit-code-from with docker compose v5.6.0's on the same project and
// daemon: the exit codes, and the lines each container said.
func TestUpAbortLikeDockerCompose(t *testing.T) {
	onlyOn(t, "dockerhost", "docker compose runs on dockerd")
	dc := composeBinary(t)
	loadImage(t)
	p := newProject(t, abortCompose)
	t.Cleanup(func() { _ = exec.Command(dc, "-p", p.name, "down", "-t", "1").Run() })
	for _, args := range [][]string{{"up", "--abort-on-container-exit"}, {"up", "--exit-code-from", "slow"}, {"up", "--exit-code-from", "quick"}} {
		out, _, code := p.run(append([]string{"compose", "--progress", "quiet"}, args...)...)
		dout, dcode := runDockerCompose(t, dc, p, append([]string{"--progress", "quiet"}, args...)...)
		if code != dcode || said(out) != said(dout) {
			t.Fatalf("%v: cornus exit %d, said %q; docker compose exit %d, said %q\ncornus:\n%s\ndocker compose:\n%s",
				args, code, said(out), dcode, said(dout), out, dout)
		}
		_ = exec.Command(dc, "-p", p.name, "down", "-t", "1").Run()
	}
}

// said is the sorted set of what a foreground up printed, prefixes and
// terminal escapes aside: "quick-1:quick-said-this", "quick-1:exited 3".
func said(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimPrefix(l, "\r\x1b[K")
		if name, msg, ok := strings.Cut(l, "|"); ok {
			lines = append(lines, strings.TrimSpace(name)+":"+strings.TrimSpace(msg))
		} else if name, code, ok := strings.Cut(l, " exited with code "); ok {
			lines = append(lines, name+":exited "+code)
		} else if strings.HasPrefix(l, "Attaching to ") {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
