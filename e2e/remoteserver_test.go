package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// refusal is TestRemoteModeBesideTheApp's).
func skipBesideTheApp(t *testing.T, what string) {
	t.Helper()
	if sc, ok := daemon(t).(backends.SiblingCompanions); ok && sc.SiblingCompanions() {
		t.Skipf("%s: the %s backend's companions run beside their apps, where %s is refused (TestRemoteModeBesideTheApp asserts it)", t.Name(), daemon(t).Name(), what)
	}
}

func (s *remoteServed) env() []string {
	return []string{"CORNUS_SERVER=" + s.url, "CORNUS_TOKEN=" + s.token}
}

// mountedFor lists the mounts of this host whose path names project
// (the shared volumes of its companions are named after it).
func mountedFor(t *testing.T, project string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.Contains(f[4], project+"_cornus-caretaker-") {
			out = append(out, f[4])
		}
	}
	return out
}
