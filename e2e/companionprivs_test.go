package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testimage"
)

// Capability bits (linux/capability.h) the companion tests read.
const (
	capNetAdmin = 12
	capNetRaw   = 13
	capSysAdmin = 21
)

// procStatus is what the tests read of a process in /proc.
type procStatus struct {
	pid        int
	capEff     uint64
	noNewPrivs bool
	roRoot     bool // its root is mounted read-only
}

// companionProc finds, on this host, the caretaker that owns the network
// namespace of svc's replica (the container's runtime is local): the
// process running `/cornus caretaker` in that namespace. Every backend's
// companion is one (a container of its own, or a pod's native sidecar).
func companionProc(t *testing.T, p *project, svc string) procStatus {
	t.Helper()
	netns := strings.TrimSpace(p.must("compose", "exec", "-T", svc, "readlink", "/proc/self/ns/net"))
	if !strings.HasPrefix(netns, "net:[") {
		t.Fatalf("%s's network namespace: %q", svc, netns)
	}
	var found []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range procs {
		if ns, err := os.Readlink(dir + "/ns/net"); err != nil || ns != netns {
			continue
		}
		if cmd, err := os.ReadFile(dir + "/cmdline"); err == nil && string(cmd) == "/cornus\x00caretaker\x00" {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		t.Fatalf("caretakers in %s's network namespace %s: %v, want one", svc, netns, found)
	}
	st := procStatus{pid: found[0]}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", st.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch v = strings.TrimSpace(v); k {
		case "CapEff":
			if st.capEff, err = strconv.ParseUint(v, 16, 64); err != nil {
				t.Fatalf("CapEff %q: %v", v, err)
			}
		case "NoNewPrivs":
			st.noNewPrivs = v == "1"
		}
	}
	mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", st.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(l); len(f) > 5 && f[4] == "/" {
			st.roRoot = strings.HasPrefix(f[5], "ro,") || f[5] == "ro"
		}
	}
	return st
}

// appCapEff is the effective capability set of a shell in svc.
func appCapEff(t *testing.T, p *project, svc string) uint64 {
	t.Helper()
	out := p.must("compose", "exec", "-T", svc, "grep", "CapEff", "/proc/self/status")
	v, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "CapEff:")), 16, 64)
	if err != nil {
		t.Fatalf("%s's CapEff %q: %v", svc, out, err)
	}
	return v
}

// markdialRef is the busybox test image with /bin/markdial (the SO_MARK
// attack, e2e/markdial).
const markdialRef = "cornus-test/markdial:1"

// markdialImage builds markdialRef here and makes it available to the
// backend (loaded, or imported into the test cluster's node: nothing is
// pulled).
func markdialImage(t *testing.T) {
	t.Helper()
	loadTestImage(t, markdialRef, map[string]string{"bin/markdial": string(testTool(t, "markdial"))})
}

// testTool builds the static test program ./name (a package of e2e) and
// returns it.
func testTool(t *testing.T, name string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-trimpath", "-o", out, "./"+name)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// loadTestImage builds the busybox test image with files added as ref
// and makes it available to the backend (loaded, or imported into the
// test cluster's node: nothing is pulled).
func loadTestImage(t *testing.T, ref string, files map[string]string) {
	t.Helper()
	tar := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(tar)
	if err != nil {
		t.Fatal(err)
	}
	if err := testimage.BuildBusybox(f, testimage.Options{Ref: ref, Files: files}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if daemon(t).Capabilities().Sidecars {
		ctr := nodeCtr("images", "import", tar)
		if out, err := ctr.CombinedOutput(); err != nil {
			t.Fatalf("import %s into the node: %v: %s", ref, err, out)
		}
		t.Cleanup(func() {
			_ = nodeCtr("images", "rm", "docker.io/"+ref).Run()
		})
		return
	}
	if out, err := exec.Command(cornusBin, "image", "load", "-i", tar).CombinedOutput(); err != nil || !strings.Contains(string(out), "Loaded image: "+ref) {
		t.Fatalf("cornus image load %s: %v\n%s", ref, err, out)
	}
}

// TestTransparentMarkBypass is the SO_MARK attack on transparent egress
// (security round 2, item 11): the app marks its socket with the mark the
// redirect skips (0xc0e5; CAP_NET_RAW may since Linux 5.17) and connects
// to a destination its policy denies, a container of the test's own
// project. setsockopt fails (EPERM: the app has neither CAP_NET_RAW nor
// CAP_NET_ADMIN) and the connection goes through the redirect and is
// refused; the caretaker's own marked dial (a cluster route) still
// passes. The companion holds NET_ADMIN and nothing else, with
// no-new-privileges and a read-only root; an app that asks for NET_RAW is
// refused.
func TestTransparentMarkBypass(t *testing.T) {
	b := daemon(t)
	if why, gap := b.Capabilities().Gap("egress"); gap {
		t.Skipf("egress is a declared gap of %s: %s", b.Name(), why)
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the drill reads the companion's /proc status (root)")
		}
		t.Skip("the drill reads the companion's /proc status (root)")
	}
	loadImage(t)
	if b.Capabilities().Sidecars {
		agentImageOnNode(t)
	}
	markdialImage(t)
	ref := markdialRef
	p := newProject(t, fmt.Sprintf(markServices, ref, image, ""))
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s", errOut)
	}
	// Routed cluster: the caretaker dials it, marked, from its cgroup
	// (and far is up).
	var out string
	waitFor(t, 60*time.Second, "far:8081 through the caretaker (a cluster route)", func() bool {
		out, _, _ = p.run("compose", "exec", "-T", "app", "markdial", "far:8081")
		return strings.Contains(out, "far-answer")
	})
	// Denied: the mark is refused, the redirect takes the connection.
	out = p.must("compose", "exec", "-T", "app", "markdial", "far:8080")
	if !strings.Contains(out, "mark: operation not permitted") || !strings.Contains(out, `read: ""`) {
		t.Errorf("the app marked its socket as the caretaker's and dialed a denied destination:\n%s", out)
	}
	if eff := appCapEff(t, p, "app"); eff&(1<<capNetRaw|1<<capNetAdmin) != 0 {
		t.Errorf("the app's CapEff %#x holds NET_RAW or NET_ADMIN", eff)
	}
	st := companionProc(t, p, "app")
	if st.capEff != 1<<capNetAdmin || !st.noNewPrivs || !st.roRoot {
		t.Errorf("the companion (pid %d): CapEff %#x (want NET_ADMIN only, %#x), no-new-privileges %v, read-only root %v",
			st.pid, st.capEff, uint64(1<<capNetAdmin), st.noNewPrivs, st.roRoot)
	}
	logs := ""
	if b.Capabilities().Sidecars {
		logs = sidecarLogs(t, p.name, "app")
	} else {
		logs, _, _ = p.run("compose", "logs", "app-caretaker")
	}
	if !strings.Contains(logs, `"route":"deny"`) {
		t.Errorf("the caretaker does not log the refusal:\n%s", logs)
	}
	// Where the kernel matches the caretaker's cgroup (Linux 6.11 counts
	// its level from the container's cgroup namespace), it says so;
	// otherwise it warns that the mark alone tells its sockets apart.
	if !strings.Contains(logs, "marked sockets in its cgroup") {
		t.Logf("the redirect skips the caretaker's sockets by their mark only here:\n%s", logs)
	}
	p.must("compose", "--progress", "quiet", "down", "-t", "1")

	// Asking for NET_RAW with transparent egress: refused up front.
	raw := newProject(t, fmt.Sprintf(markServices, ref, image, "\n    cap_add: [NET_RAW]"))
	_, errOut, code := raw.run("compose", "--progress", "plain", "up", "-d")
	if code == 0 || !strings.Contains(errOut, "services.app.capAdd[0]: NET_RAW") || !strings.Contains(errOut, "egress mode proxy") {
		t.Errorf("NET_RAW with transparent egress: exit %d, want a refusal naming capAdd[0]:\n%s", code, errOut)
	}
}

// markServices: app (transparent egress: port 8081 routed cluster, the
// rest denied; %[3]s adds to it) and far, which answers on 8080 and 8081.
const markServices = `
services:
  app:
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]%[3]s
    x-cornus-egress:
      mode: transparent
      rules:
        - pattern: "0.0.0.0/0:8081"
          route: cluster
      default: deny
  far:
    image: %[2]s
    command: ["sh", "-c", "mkdir -p /www && echo far-answer > /www/index.html && httpd -p 8081 -h /www && exec httpd -f -p 8080 -h /www"]
`
