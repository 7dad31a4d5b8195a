package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/caretaker"
)

// Backends that run the caretaker as a sidecar of its replica
// (Capabilities.Sidecars: kubernetes, a native sidecar in the pod) have no
// companion container of its own, and their nodes pull images themselves:
// the helpers here put the agent image on the node and read the sidecar's
// output from the cluster.

// k8sState is scripts/k8s.sh's state directory.
func k8sState() string {
	if v := os.Getenv("CORNUS_K8S_STATE"); v != "" {
		return v
	}
	return "/run/cornus-k8s"
}

// k8sNamespace is the test cluster's namespace for cornus.
func k8sNamespace() string {
	if ns := os.Getenv("CORNUS_K8S_NAMESPACE"); ns != "" {
		return ns
	}
	return "cornus"
}

// nodeCtr is ctr on the test cluster node's containerd (its k8s.io
// namespace).
func nodeCtr(args ...string) *exec.Cmd {
	return exec.Command("ctr", append([]string{"--address", filepath.Join(k8sState(), "containerd.sock"), "--namespace", "k8s.io"}, args...)...)
}

// agentImageOnNode imports the agent image of the binary under test into
// the test cluster's node (its containerd's k8s.io namespace), as
// scripts/k8s.sh imports the test images: there is no registry, and
// nothing is pulled. The server then finds it (InspectImage) and uses it
// without CORNUS_AGENT_IMAGE. It is removed again at the end.
func agentImageOnNode(t *testing.T) string {
	t.Helper()
	ref, err := caretaker.AgentRef(cornusBin)
	if err != nil {
		t.Fatal(err)
	}
	ctr := nodeCtr
	full := "docker.io/library/" + ref
	have, err := ctr("images", "ls", "-q").Output()
	if err != nil {
		t.Fatalf("the test cluster's node containerd (scripts/k8s.sh): %v", err)
	}
	if strings.Contains("\n"+string(have), "\n"+full+"\n") {
		return ref
	}
	tar := filepath.Join(t.TempDir(), "agent.tar")
	f, err := os.Create(tar)
	if err != nil {
		t.Fatal(err)
	}
	if err := caretaker.BuildAgentImage(f, cornusBin, ref); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out, err := ctr("images", "import", tar).CombinedOutput(); err != nil {
		t.Fatalf("import the agent image into the node: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = ctr("images", "rm", full).Run() })
	return ref
}

// sidecarLogs is the output of the caretaker sidecars of a project's
// service (kubernetes), for assertions on what the caretaker logged.
func sidecarLogs(t *testing.T, project, service string) string {
	t.Helper()
	out, err := exec.Command("kubectl", "-n", k8sNamespace(), "logs", "--tail=-1", "-c", "cornus-caretaker",
		"-l", "cornus.dev/project="+project+",cornus.dev/app="+service).CombinedOutput()
	if err != nil {
		t.Errorf("kubectl logs of %s's caretaker sidecar: %v: %s", service, err, out)
	}
	return string(out)
}

// sidecarMounts lists this host's mounts of the shared directories of a
// project's pods (their emptyDirs, where the sidecars' FUSE mounts
// propagate through the node).
func sidecarMounts(t *testing.T, podUIDs []string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || !strings.Contains(f[4], "cornus-shared-cornus-mount-") {
			continue
		}
		for _, uid := range podUIDs {
			if strings.Contains(f[4], uid) {
				out = append(out, f[4])
			}
		}
	}
	return out
}

// podUIDs are the UIDs of a project's pods.
func podUIDs(t *testing.T, project string) []string {
	t.Helper()
	out, err := exec.Command("kubectl", "-n", k8sNamespace(), "get", "pods", "-l", "cornus.dev/project="+project,
		"-o", "jsonpath={.items[*].metadata.uid}").Output()
	if err != nil {
		t.Fatalf("kubectl get pods: %v", err)
	}
	return strings.Fields(string(out))
}

// Issue 12 item 5: on kubernetes in remote mode (CORNUS_K8S_REMOTE=1) the
// caretaker is a native sidecar of each replica's pod, gating the app
// container with its startup probe. Each client-local mount is an
// emptyDir the sidecar mounts (FUSE over the session's 9P export,
// Bidirectional) and the app sees (HostToContainer): a container's write
// lands on the client, the client's edit reaches the container, :ro
// refuses writes, escapes stay confined, down leaves nothing mounted on
// the node; a single-file source is refused with a clear error.
func TestSidecarLocalMounts(t *testing.T) {
	if !daemon(t).Capabilities().Sidecars {
		t.Skipf("backends with caretaker sidecars only (kubernetes); %s runs companions as containers: TestRemoteModeLocalMounts", daemon(t).Name())
	}
	srv := startRemoteServer(t)
	b := daemon(t)
	p := newProject(t, `
services:
  app:
    image: `+image+`
    user: "1000"
    volumes: ["./src:/work", "./cfg:/cfg:ro"]
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
`, srv.env()...)
	for _, d := range []string{"src", "cfg"} {
		if err := os.Mkdir(filepath.Join(p.dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(filepath.Join(p.dir, d), 0o777) // the app runs as uid 1000
	}
	writeFile(t, filepath.Join(p.dir, "src", "seed"), "v1\n")
	writeFile(t, filepath.Join(p.dir, "cfg", "app.ini"), "ro\n")
	start := time.Now()
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	t.Logf("up with 2 client-local mounts through the caretaker sidecar: %v", time.Since(start).Round(10*time.Millisecond))
	uids := podUIDs(t, p.name)
	if m := sidecarMounts(t, uids); len(m) != 2 {
		t.Errorf("the sidecar's mounts on the node (Bidirectional propagation): %v, want 2", m)
	}
	if got := p.must("compose", "exec", "-T", "app", "sh", "-c", "echo from-container > /work/out && cat /work/seed /cfg/app.ini"); got != "v1\nro\n" {
		t.Errorf("read through the mounts: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "src", "out")); err != nil || string(b) != "from-container\n" {
		t.Errorf("the container's write on the client: %q %v", b, err)
	}
	writeFile(t, filepath.Join(p.dir, "src", "seed"), "v2 edited on the client\n")
	waitFor(t, 5*time.Second, "the client's edit in the container", func() bool {
		out, _, _ := p.run("compose", "exec", "-T", "app", "cat", "/work/seed")
		return out == "v2 edited on the client\n"
	})
	if out, _, code := p.run("compose", "exec", "-T", "app", "sh", "-c", "echo x > /cfg/new"); code == 0 {
		t.Errorf(":ro took a write: %q", out)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "cfg", "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(":ro export on the client got a file: %v", err)
	}
	writeFile(t, filepath.Join(p.dir, "outside"), "secret-outside\n")
	escape := "ln -s " + filepath.Join(p.dir, "outside") + " /work/abs; ln -s ../outside /work/rel; cat /work/abs /work/rel /work/../outside 2>&1; true"
	if out, _, _ := p.run("compose", "exec", "-T", "app", "sh", "-c", escape); strings.Contains(out, "secret-outside") {
		t.Errorf("an escape read the client's file outside the export:\n%s", out)
	}
	p.must("compose", "--progress", "quiet", "down")
	waitFor(t, 30*time.Second, "nothing mounted on the node after down", func() bool { return len(sidecarMounts(t, uids)) == 0 })
	if c, _, v := leftovers(t, b, p.name); c != 0 || v != 0 {
		t.Errorf("%d containers, %d volumes after down", c, v)
	}

	// A single file cannot be an emptyDir: refused, saying why.
	one := newProject(t, "services:\n  app:\n    image: "+image+"\n    volumes: [\"./one.conf:/etc/one.conf\"]\n", srv.env()...)
	writeFile(t, filepath.Join(one.dir, "one.conf"), "one\n")
	_, errOut, code := one.run("compose", "--progress", "plain", "up", "-d")
	if code == 0 || !strings.Contains(errOut, "single file") || !strings.Contains(errOut, "mount the directory") {
		t.Errorf("a single-file client-local mount on a sidecar backend: exit %d, want a refusal naming it:\n%s", code, errOut)
	}
}
