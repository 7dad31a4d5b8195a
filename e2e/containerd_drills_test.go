package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testnet"
)

// The containerd fault drills (issue 8): what a crash of cornus, of a
// monitor or of containerd itself leaves, and that cornus converges from
// it with nothing leaked.

const drillServices = `
services:
  a:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
  b:
    image: cornus-test/busybox:1
    deploy: {replicas: 3}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
  c:
    image: cornus-test/busybox:1
    ports: ["127.0.0.1:${PORT}:8080"]
    command: ["httpd", "-f", "-p", "8080"]
`

// A cornus killed with SIGKILL in the middle of up leaves a half-made
// project; the next up converges it and down -v leaves nothing.
func TestContainerdDrillKilledMidUp(t *testing.T) {
	onlyOn(t, "containerd", "the drill is about containerd's own state")
	b := daemon(t)
	loadImage(t)
	p := newProject(t, midUpServices, fmt.Sprintf("PORT=%d", testnet.FreePort(t)))
	// Each kill must cut up short, and one must leave the project
	// half-made, or the re-run below converges nothing.
	half := false
	for _, after := range []time.Duration{150 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		half = killUpMidway(t, p, b, after, 7) || half
	}
	if !half {
		t.Fatal("no kill left the project half-made")
	}
	p.must("compose", "--progress", "quiet", "up", "-d", "--wait")
	ps := p.must("compose", "ps", "--format", "{{.Name}} {{.State}}")
	if n := strings.Count(ps, " running"); n != 7 {
		t.Fatalf("after the re-run, %d of 7 containers run:\n%s", n, ps)
	}
	ids := strings.Fields(p.must("compose", "ps", "-a", "-q"))
	p.must("compose", "--progress", "quiet", "down", "-v", "-t", "1")
	if c, n, v := leftovers(t, b, p.name); c+n+v != 0 {
		t.Fatalf("left behind: %d containers, %d networks, %d volumes", c, n, v)
	}
	assertHostClean(t, ids)
	assertNoMonitors(t)
}

// A monitor killed with SIGKILL: the container is still listed, stops and
// is removed.
func TestContainerdDrillKilledMonitor(t *testing.T) {
	onlyOn(t, "containerd", "monitors are the daemonless backends' own")
	daemon(t)
	loadImage(t)
	p := newProject(t, drillServices, fmt.Sprintf("PORT=%d", testnet.FreePort(t)))
	p.must("compose", "--progress", "quiet", "up", "-d", "a")
	id := strings.TrimSpace(p.must("compose", "ps", "-q", "a"))
	pid := monitorPid(t, id)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if ps := p.must("compose", "ps", "-a", "a"); !strings.Contains(ps, p.name+"-a-1") {
		t.Fatalf("the container is gone from ps once its monitor died:\n%s", ps)
	}
	p.must("compose", "--progress", "quiet", "stop", "-t", "1", "a")
	if ps := p.must("compose", "ps", "-a", "--format", "{{.State}}", "a"); strings.TrimSpace(ps) != "exited" {
		t.Fatalf("after stop: %q", ps)
	}
	p.must("compose", "--progress", "quiet", "down", "-v")
	assertNoMonitors(t)
}

// containerd restarted under running containers: they are found again,
// exec works, their monitors still supervise, and down removes them.
func TestContainerdDrillRestartContainerd(t *testing.T) {
	onlyOn(t, "containerd", "the drill restarts the private containerd")
	daemon(t)
	loadImage(t)
	port := testnet.FreePort(t)
	p := newProject(t, drillServices, fmt.Sprintf("PORT=%d", port))
	p.must("compose", "--progress", "quiet", "up", "-d", "--wait")
	before := p.must("compose", "ps", "-q")
	restartContainerd(t)
	if after := p.must("compose", "ps", "-q"); after != before {
		t.Fatalf("containers before the restart:\n%s\nafter:\n%s", before, after)
	}
	if out := p.must("compose", "exec", "-T", "a", "echo", "alive"); out != "alive\n" {
		t.Fatalf("exec after the restart: %q", out)
	}
	if _, err := testnet.HTTPGet(fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("published port after the restart: %v", err)
	}
	// The monitor still supervises: a stop goes through it and is recorded.
	p.must("compose", "--progress", "quiet", "stop", "-t", "1", "b")
	if ps := p.must("compose", "ps", "-a", "--format", "{{.State}}", "b"); strings.Count(ps, "exited") != 3 {
		t.Fatalf("after stop: %q", ps)
	}
	p.must("compose", "--progress", "quiet", "down", "-v", "-t", "1")
	assertNoMonitors(t)
}

// restartContainerd stops the private containerd (SIGTERM: tasks keep
// running under their shims) and starts it again with its script.
func restartContainerd(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("/run/cornus-containerd/containerd.pid")
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if out, err := exec.Command("../scripts/containerd.sh").CombinedOutput(); err != nil {
		t.Fatalf("restart containerd: %v\n%s", err, out)
	}
}

func monitorPid(t *testing.T, id string) int {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(os.Getenv("CORNUS_DATA_DIR"), "containerd", "records", id+"*", "record.json"))
	if len(matches) != 1 {
		t.Fatalf("record of %s: %v", id, matches)
	}
	var r struct {
		Monitor struct{ Pid int } `json:"monitor"`
	}
	b, _ := os.ReadFile(matches[0])
	if err := json.Unmarshal(b, &r); err != nil || r.Monitor.Pid == 0 {
		t.Fatalf("record of %s names no monitor: %v %s", id, err, b)
	}
	return r.Monitor.Pid
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; syscall.Kill(pid, 0) == nil; i++ {
		if i > 200 {
			t.Fatalf("pid %d did not exit", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// assertNoMonitors: no monitor of this run's data dir is left.
func assertNoMonitors(t *testing.T) {
	t.Helper()
	data := os.Getenv("CORNUS_DATA_DIR")
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, _ := os.ReadFile(p)
		if !strings.Contains(string(cmd), "monitor\x00containerd") {
			continue
		}
		env, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
		if strings.Contains(string(env), "CORNUS_DATA_DIR="+data+"\x00") {
			t.Errorf("monitor left: %s %s", filepath.Dir(p), strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
}
