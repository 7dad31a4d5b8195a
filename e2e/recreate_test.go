package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// recreateProject is one service whose environment the scenario changes.
const recreateProject = `services:
  app:
    image: ` + image + `
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1 & wait $$!; done"]
    environment:
      GREETING: %s
`

// composeRecreateScenario proves docker compose's recreate path through the
// proxy (hardening issue, item 7): after a config change, compose v5.6.0's
// `up -d` creates the new container under a temporary name, stops and
// removes the old one, renames the new one to the service's name and
// starts it; the new container has the new environment and is the only
// one left.
func composeRecreateScenario(p *proxy) {
	t := p.t
	docker := tool(t, "docker", "the machine image ships the docker CLI 28")
	p.installCompose()
	dir := filepath.Join(p.dir, "recreate")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(greeting string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(strings.Replace(recreateProject, "%s", greeting, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dc := func(args ...string) string {
		t.Helper()
		return p.must(dir, docker, append([]string{"compose", "-p", "proxyre"}, args...)...)
	}
	t.Cleanup(func() { p.run(dir, docker, "compose", "-p", "proxyre", "down", "-v", "-t", "1") })

	write("one")
	dc("up", "-d")
	before := strings.TrimSpace(dc("ps", "-q", "app"))
	if got := strings.TrimSpace(dc("exec", "-T", "app", "sh", "-c", "echo $GREETING")); got != "one" {
		t.Fatalf("before the change: GREETING=%q", got)
	}

	write("two")
	since := unixNano(time.Now().Add(-time.Second))
	if up := dc("up", "-d"); !strings.Contains(up, "Recreate") {
		t.Errorf("second up did not recreate:\n%s", up)
	}
	after := strings.TrimSpace(dc("ps", "-q", "app"))
	if after == "" || after == before {
		t.Fatalf("container not replaced: before %q, after %q", before, after)
	}
	// The order compose used, as the proxy's event stream tells it.
	events := p.must(dir, docker, "events", "--since", since, "--until", unixNano(time.Now()),
		"--filter", "label=com.docker.compose.project=proxyre", "--format", "{{.Actor.ID}} {{.Action}}")
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(events), "\n") {
		id, action, _ := strings.Cut(l, " ")
		switch {
		case id == before && (action == "rename" || action == "destroy"):
			order = append(order, "old:"+action)
		case id == after && (action == "create" || action == "rename" || action == "start"):
			order = append(order, "new:"+action)
		}
	}
	if got, want := strings.Join(order, " "), "new:create old:destroy new:rename new:start"; got != want {
		t.Errorf("recreate events %q, want %q:\n%s", got, want, events)
	}
	if got := strings.TrimSpace(dc("exec", "-T", "app", "sh", "-c", "echo $GREETING")); got != "two" {
		t.Errorf("after the change, exec sees GREETING=%q", got)
	}
	inspect := p.must(dir, docker, "inspect", "--format", "{{.Name}} {{.State.Status}} {{json .Config.Env}}", after)
	if !strings.HasPrefix(inspect, "/proxyre-app-1 running ") || !strings.Contains(inspect, `"GREETING=two"`) {
		t.Errorf("inspect of the new container: %s", inspect)
	}
	if out, code := p.run(dir, docker, "inspect", before); code == 0 {
		t.Errorf("the old container %s is still there:\n%s", before, out)
	}
	all := strings.Fields(p.must(dir, docker, "ps", "-a", "-q", "--no-trunc", "--filter", "label=com.docker.compose.project=proxyre"))
	if len(all) != 1 || !strings.HasPrefix(all[0], after) {
		t.Errorf("project containers after recreate: %v, want only %s", all, after)
	}
}

// unixNano is a time as docker events --since/--until take it.
func unixNano(t time.Time) string { return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond()) }
