package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/internal/testnet"
)

// remoteServed is a cornus serve in its backend's remote mode, listening
// on an address of a veth pair the test made (the companions dial back
// to it from their containers).
type remoteServed struct {
	url, token string
	logs       *strings.Builder
	// dir holds the server's tokens and state directory.
	dir string
}

// remoteEnvVar is the selected backend's remote-mode variable ("" when
// it has none: remote mode is dockerhost's, podman's, containerd's,
// bare's, incus's and kubernetes's).
func remoteEnvVar() string {
	switch fromenv.Selected(os.Environ()) {
	case "dockerhost":
		return "CORNUS_DOCKER_REMOTE"
	case "podman":
		return "CORNUS_PODMAN_REMOTE"
	case "containerd":
		return "CORNUS_CONTAINERD_REMOTE"
	case "bare":
		return "CORNUS_BARE_REMOTE"
	case "incus":
		return "CORNUS_INCUS_REMOTE"
	case "kubernetes":
		return "CORNUS_K8S_REMOTE"
	}
	return ""
}

func startRemoteServer(t *testing.T) *remoteServed {
	t.Helper()
	daemon(t)
	v := remoteEnvVar()
	if v == "" {
		t.Skipf("remote mode is the dockerhost, podman, containerd, bare, incus and kubernetes backends'; %s has none", fromenv.Selected(os.Environ()))
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("remote mode's drills need root (a veth pair, FUSE in the companion)")
		}
		t.Skip("remote mode's drills need root (a veth pair, FUSE in the companion)")
	}
	loadImage(t)
	if daemon(t).Capabilities().Sidecars {
		agentImageOnNode(t)
	}
	sfx := make([]byte, 3)
	_, _ = rand.Read(sfx)
	id := hex.EncodeToString(sfx)
	n, _ := rand.Int(rand.Reader, big.NewInt(60))
	addr := fmt.Sprintf("10.231.%d.1", 40+n.Int64())
	host, peer := "crh"+id, "crp"+id
	sh(t, "ip", "link", "add", host, "type", "veth", "peer", "name", peer)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	sh(t, "ip", "addr", "add", addr+"/32", "dev", host)
	sh(t, "ip", "link", "set", host, "up")
	sh(t, "ip", "link", "set", peer, "up")

	dir := t.TempDir()
	tok, err := exec.Command(cornusBin, "token", "create", "--tokens-file", filepath.Join(dir, "tokens"), "e2e").Output()
	if err != nil {
		t.Fatal(err)
	}
	port := testnet.FreePort(t)
	url := fmt.Sprintf("http://%s:%d", addr, port)
	srv := exec.Command(cornusBin, "serve", "--listen", fmt.Sprintf("%s:%d", addr, port), "--insecure-listen",
		"--tokens-file", filepath.Join(dir, "tokens"))
	srv.Env = append(os.Environ(), "CORNUS_STATE_DIR="+filepath.Join(dir, "state"), "CORNUS_ADVERTISE_URL="+url, v+"=1")
	logs := startLogged(t, srv)
	return &remoteServed{url: url, token: strings.TrimSpace(string(tok)), logs: logs, dir: dir}
}

// skipBesideTheApp skips a test of what remote mode's companions do in
// their app's namespaces where they run beside it instead (incus: the
// server mounts client-local mounts there, and refuses credentials;
// TestRemoteModeBesideTheApp asserts both).
func skipBesideTheApp(t *testing.T, what string) {
	t.Helper()
	if sc, ok := daemon(t).(backends.SiblingCompanions); ok && sc.SiblingCompanions() {
		t.Skipf("%s: the %s backend's companions run beside their apps, where %s is not theirs (TestRemoteModeBesideTheApp)", t.Name(), daemon(t).Name(), what)
	}
}

func (s *remoteServed) env() []string {
	return []string{"CORNUS_SERVER=" + s.url, "CORNUS_TOKEN=" + s.token}
}

// mountedFor lists the mounts of this host whose path names project
// (the shared volumes of its companions are named after it).
func mountedFor(t *testing.T, project string) []string {
	t.Helper()
	root := runtimeRoot(t)
	table := "/proc/self/mountinfo"
	if root != "/" {
		table = filepath.Join(filepath.Dir(root), "mountinfo") // the namespace's own
	}
	data, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.Contains(f[4], project+"_cornus-caretaker-") {
			out = append(out, filepath.Join(root, f[4]))
		}
	}
	return out
}

// runtimeRoot is the root of the mount namespace the runtime's containers
// are made in, as this host reaches it: "/", or, for a rootless podman,
// its user's namespace (its pause process's /proc/PID/root), where a
// companion's mounts propagate.
func runtimeRoot(t *testing.T) string {
	t.Helper()
	rr, ok := daemon(t).(backends.RootlessReporter)
	if !ok {
		return "/"
	}
	if rootless, err := rr.Rootless(context.Background()); err != nil || !rootless {
		return "/"
	}
	var st syscall.Stat_t
	sock := strings.TrimPrefix(os.Getenv("CORNUS_PODMAN_SOCKET"), "unix://")
	if err := syscall.Stat(sock, &st); err != nil {
		t.Fatalf("the rootless podman's socket %q: %v", sock, err)
	}
	pid, err := os.ReadFile(fmt.Sprintf("/run/user/%d/libpod/tmp/pause.pid", st.Uid))
	if err != nil {
		t.Fatalf("the rootless podman's pause process: %v", err)
	}
	return "/proc/" + strings.TrimSpace(string(pid)) + "/root"
}

// isSymlinkInRuntime reports whether path (below runtimeRoot) is a
// symlink as the runtime's namespace sees it: a rootless podman's FUSE
// mounts answer only processes of its user namespace, so the look is
// taken from there.
func isSymlinkInRuntime(t *testing.T, path string) bool {
	t.Helper()
	root := runtimeRoot(t)
	if root == "/" {
		st, err := os.Lstat(path)
		return err == nil && st.Mode()&os.ModeSymlink != 0
	}
	pid := strings.TrimPrefix(filepath.Dir(root), "/proc/")
	out, _ := exec.Command("nsenter", "-t", pid, "-U", "-m", "--", "stat", "-c", "%F", strings.TrimPrefix(path, root)).Output()
	return strings.TrimSpace(string(out)) == "symbolic link"
}
