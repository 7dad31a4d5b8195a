// Package daemoncrash kills a private dockerd in the middle of `cornus
// compose up` and checks the next up converges. It is its own test binary
// because it makes the process a child subreaper (see startDockerd), which
// must not catch the daemons other e2e tests start and stop.
package daemoncrash

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/internal/testbin"
	"github.com/cornus-dev/cornus/internal/testimage"
)

var cornusBin string

func TestMain(m *testing.M) { testbin.Main(m.Run, "../../cmd/cornus", &cornusBin) }

const image = "cornus-test/busybox:1"

// six services on the project network, one with a named volume: enough
// starts in flight that a kill lands between creating and starting a
// task. s6 waits for s5 to be healthy, which takes two seconds: up is
// still running when the daemon is killed, and s6 is not yet created.
const compose = `
x-svc: &svc
  image: cornus-test/busybox:1
  command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
services:
  s1: *svc
  s2: *svc
  s3: *svc
  s4: {<<: *svc, volumes: ["data:/data"]}
  s5:
    <<: *svc
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 2; touch /tmp/ready; while true; do sleep 0.2; done"]
    healthcheck: {test: ["CMD", "test", "-f", "/tmp/ready"], interval: 200ms, retries: 100}
  s6: {<<: *svc, depends_on: {s5: {condition: service_healthy}}}
volumes:
  data: {}
`

// TestUpConvergesAfterDaemonCrash (hardening issue, daemon crash): dockerd
// SIGKILLed mid-up and restarted leaves containers created but not
// started, and some whose task containerd kept ("task ID: already exists"
// on every start); the next up must bring every service up anyway. Each
// round kills at a different moment after the first start was requested.
func TestUpConvergesAfterDaemonCrash(t *testing.T) {
	d := startDockerd(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(compose), 0o644); err != nil {
		t.Fatal(err)
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	project := "crash" + hex.EncodeToString(suffix)
	env := []string{"DOCKER_HOST=" + d.host(), "COMPOSE_PROJECT_NAME=" + project}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DOCKER_HOST" && k != "CORNUS_DOCKER_SOCK" && k != "CORNUS_DEPLOY_BACKEND" && k != "COMPOSE_PROJECT_NAME" {
			env = append(env, kv)
		}
	}
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, cornusBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	tar := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(tar)
	if err != nil {
		t.Fatal(err)
	}
	if err := testimage.BuildBusybox(f, testimage.Options{Ref: image}); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if out, err := run("image", "load", "-i", tar); err != nil {
		t.Fatalf("image load: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if d.cmd != nil {
			if out, err := run("compose", "--progress", "quiet", "down", "-v", "-t", "0"); err != nil {
				t.Logf("down: %v\n%s", err, out)
			}
		}
	})

	staleSeen := 0
	for round, delay := range []time.Duration{0, 100 * time.Millisecond, 250 * time.Millisecond} {
		killed := d.killDuringUp(t, dir, env, delay)
		d.start()
		states := d.states(t, project)
		// The kill must have cut up short: up failed, and s6 (created only
		// once s5 is healthy) does not exist yet.
		if killed != "up failed" || slices.ContainsFunc(d.list(t, project), func(c backends.Container) bool { return c.App() == "s6" }) {
			t.Fatalf("round %d: the kill %v after the first start did not interrupt up (%s; after restart %s): the round tests nothing", round, delay, killed, states)
		}
		out, err := run("compose", "--progress", "plain", "up", "-d")
		if err != nil {
			t.Fatalf("round %d: up after the crash failed: %v\n%s\nstates after restart: %s\ndockerd log:\n%s", round, err, out, states, d.logTail())
		}
		if n := strings.Count(out, "the runtime kept its task across a crash"); n > 0 {
			staleSeen += n
		}
		t.Logf("round %d (kill %v after the first start; %s): after restart %s; up recreated %d", round, delay, killed, states, strings.Count(out, "Recreate"))
		cs := d.list(t, project)
		for _, c := range cs {
			if !c.Running() {
				t.Errorf("round %d: %s is %s after up", round, c.Name, c.State)
			}
		}
		if n := len(cs); n != 6 {
			t.Errorf("round %d: %d containers, want 6\n%s", round, n, out)
		}
		if out, err := run("compose", "--progress", "quiet", "down", "-t", "0"); err != nil {
			t.Fatalf("round %d: down: %v\n%s", round, err, out)
		}
	}
	t.Logf("containers replaced for a task kept across the crash: %d", staleSeen)
}

// killDuringUp starts `up -d` and SIGKILLs the daemon delay after up
// reports its first start. It returns how that up ended.
func (d *dockerd) killDuringUp(t *testing.T, dir string, env []string, delay time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := exec.CommandContext(ctx, cornusBin, "compose", "--progress", "plain", "up", "-d")
	up.Dir, up.Env = dir, env
	stderr, err := up.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "Starting") {
	}
	time.Sleep(delay)
	d.kill()
	for sc.Scan() {
	}
	if err := up.Wait(); err != nil {
		return "up failed"
	}
	return "up had finished"
}

// list returns the project's containers on the private daemon.
func (d *dockerd) list(t *testing.T, project string) []backends.Container {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := dockerhost.New(ctx, dockerhost.WithHost(d.host()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cs, err := b.List(ctx, backends.ListOptions{Labels: map[string]string{backends.ComposeProject: project}, All: true})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// states summarizes the containers' states, e.g. "created×4 exited×2".
func (d *dockerd) states(t *testing.T, project string) string {
	count := map[string]int{}
	for _, c := range d.list(t, project) {
		count[string(c.State)]++
	}
	var parts []string
	for s, n := range count {
		parts = append(parts, fmt.Sprintf("%s×%d", s, n))
	}
	if len(parts) == 0 {
		return "no containers"
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}
