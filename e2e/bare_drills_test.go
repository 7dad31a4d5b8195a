package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/svc"
	"github.com/cornus-dev/cornus/internal/testnet"
)

// The bare backend's fault drills (issue 14): a monitor killed, and a
// simulated host reboot, seen through the CLI; nothing leaked.

const bareDrillServices = `
services:
  a:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
  c:
    image: cornus-test/busybox:1
    restart: always
    ports: ["127.0.0.1:${PORT}:8080"]
    command: ["httpd", "-f", "-p", "8080"]
`

// bareRecord reads a bare container's record: its monitor's pid.
func bareRecord(t *testing.T, id string) (monitorPid int) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(os.Getenv("CORNUS_DATA_DIR"), "bare", "records", id+"*", "record.json"))
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

// assertNoBareMonitors: no bare monitor of this run's data dir is left.
func assertNoBareMonitors(t *testing.T) {
	t.Helper()
	data := os.Getenv("CORNUS_DATA_DIR")
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, _ := os.ReadFile(p)
		if !strings.Contains(string(cmd), "monitor\x00bare") {
			continue
		}
		env, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
		if strings.Contains(string(env), "CORNUS_DATA_DIR="+data+"\x00") {
			t.Errorf("monitor left: %s %s", filepath.Dir(p), strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
}

// A monitor killed with SIGKILL: the container is still listed running
// and serving, stop ends it, down leaves nothing.
func TestBareDrillKilledMonitor(t *testing.T) {
	onlyOn(t, "bare", "monitors driving runc are the bare backend's own")
	daemon(t)
	loadImage(t)
	port := testnet.FreePort(t)
	p := newProject(t, bareDrillServices, fmt.Sprintf("PORT=%d", port))
	p.must("compose", "--progress", "quiet", "up", "-d", "c")
	id := strings.TrimSpace(p.must("compose", "ps", "-q", "c"))
	mon := bareRecord(t, id)
	if err := syscall.Kill(mon, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, mon)
	if ps := p.must("compose", "ps", "--format", "{{.Name}} {{.State}}", "c"); !strings.Contains(ps, p.name+"-c-1 running") {
		t.Fatalf("once its monitor died:\n%s", ps)
	}
	if _, err := testnet.HTTPGet(fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("published port once the monitor died: %v", err)
	}
	p.must("compose", "--progress", "quiet", "stop", "-t", "1", "c")
	if ps := p.must("compose", "ps", "-a", "--format", "{{.State}}", "c"); strings.TrimSpace(ps) != "exited" {
		t.Fatalf("after stop: %q", ps)
	}
	p.must("compose", "--progress", "quiet", "down", "-v")
	assertHostClean(t, []string{id})
	assertNoBareMonitors(t)
}

// A simulated host reboot: monitors and containers killed, overlay roots
// unmounted, network namespace pins reduced to plain files. The next
// cornus command rebuilds from the records: the restart=always service
// runs again and answers on its published port; the one without a policy
// is exited; down -v leaves nothing.
func TestBareDrillReboot(t *testing.T) {
	onlyOn(t, "bare", "the drill wipes the bare backend's runtime state")
	daemon(t)
	loadImage(t)
	port := testnet.FreePort(t)
	p := newProject(t, bareDrillServices, fmt.Sprintf("PORT=%d", port))
	p.must("compose", "--progress", "quiet", "up", "-d", "--wait")
	ids := strings.Fields(p.must("compose", "ps", "-q"))
	data := filepath.Join(os.Getenv("CORNUS_DATA_DIR"), "bare")
	runtimeRoot := filepath.Join(svc.StateDir(os.Environ()), "bare", "runtime")
	for _, id := range ids {
		mon := bareRecord(t, id)
		if err := syscall.Kill(mon, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, mon)
		if out, err := exec.Command("runc", "--root", runtimeRoot, "delete", "--force", id).CombinedOutput(); err != nil {
			t.Fatalf("runc delete: %v: %s", err, out)
		}
		if err := syscall.Unmount(filepath.Join(data, "containers", id, "rootfs"), syscall.MNT_DETACH); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Unmount(filepath.Join(data, "netns", id), syscall.MNT_DETACH); err != nil {
			t.Fatal(err)
		}
	}
	ps := p.must("compose", "ps", "-a", "--format", "{{.Service}} {{.State}}")
	if !strings.Contains(ps, "c running") || !strings.Contains(ps, "a exited") {
		t.Fatalf("after the reboot:\n%s", ps)
	}
	// Started is not listening yet: the restarted httpd gets a moment.
	var err error
	for i := 0; i < 50; i++ {
		if _, err = testnet.HTTPGet(fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("published port after the reboot: %v", err)
	}
	if out := p.must("compose", "exec", "-T", "c", "echo", "alive"); out != "alive\n" {
		t.Fatalf("exec after the reboot: %q", out)
	}
	p.must("compose", "--progress", "quiet", "down", "-v", "-t", "1")
	assertHostClean(t, ids)
	assertNoBareMonitors(t)
}

// A cornus killed with SIGKILL in the middle of up leaves a half-made
// project (a root mounted, a namespace attached, a record written); the
// next up converges it and down -v leaves nothing.
func TestBareDrillKilledMidUp(t *testing.T) {
	onlyOn(t, "bare", "the drill is about the bare backend's own half-made state")
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
	assertNoBareMonitors(t)
}
