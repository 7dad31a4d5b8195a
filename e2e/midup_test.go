package e2e

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// midUpServices are the drill's services and two more: late waits for
// slow, healthy two seconds after it starts, so an up killed within those
// seconds is cut short whatever the machine's speed. Each round sets
// ROUND, which recreates slow: its two seconds start again. Seven
// containers.
const midUpServices = drillServices + `
  slow:
    image: cornus-test/busybox:1
    environment: {ROUND: "${ROUND:-}"}
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 2; touch /tmp/ready; while true; do sleep 0.2; done"]
    healthcheck: {test: ["CMD", "test", "-f", "/tmp/ready"], interval: 200ms, retries: 100}
  late:
    image: cornus-test/busybox:1
    depends_on: {slow: {condition: service_healthy}}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
`

// killUpMidway starts `compose up -d` and SIGKILLs it delay after it
// reports work on its first container (creating, recreating or starting
// one a killed up left) and the backend lists one. The round must have interrupted
// up: it fails the test when up finished before the kill. It returns
// whether the kill left a half-made project (containers listed, not all
// of the want running).
func killUpMidway(t *testing.T, p *project, b backends.Backend, delay time.Duration, want int) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cornusBin, "compose", "--progress", "plain", "up", "-d")
	cmd.Dir, cmd.Env = p.dir, append(slices.Clone(p.env), "ROUND="+delay.String())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if l := sc.Text(); strings.Contains(l, "Container") && (strings.Contains(l, "Creating") || strings.Contains(l, "Starting") || strings.Contains(l, "Recreate")) {
			break
		}
	}
	// The delay counts from the first container the backend lists, not
	// from the progress line: under load the line comes well before it,
	// and a kill then leaves nothing to converge.
	list := func() []backends.Container {
		cs, _ := b.List(ctx, backends.ListOptions{Labels: map[string]string{backends.ComposeProject: p.name}, All: true})
		return cs
	}
	for deadline := time.Now().Add(30 * time.Second); len(list()) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(delay)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("up %v after its first container was not cut short by the kill (%v): the round tests nothing\n%s", delay, err, out.String())
	}
	cs, err := b.List(context.Background(), backends.ListOptions{Labels: map[string]string{backends.ComposeProject: p.name}, All: true})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, c := range cs {
		if c.Running() {
			running++
		}
	}
	t.Logf("killed %v after the first container: %d containers, %d running", delay, len(cs), running)
	return len(cs) > 0 && running < want
}
