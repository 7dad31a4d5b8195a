package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testnet"
)

// TestEgressThroughClient (issue 13): a workload deployed through cornus
// serve reaches a server that only the client side can reach, through its
// caretaker, the server and the client, in transparent and proxy modes;
// a denied destination is refused; a cluster route is dialed directly
// (and, here, goes nowhere).
//
// The client side is a network namespace of the test's own: it holds the
// target (10.231.N.1, on its loopback) and reaches the server over a
// veth (10.232.N.1 on the host side, where the server listens and the
// companions dial back). The host blackholes 10.231.N.0/24, so nothing
// reaches the target but through the client.
func TestEgressThroughClient(t *testing.T) {
	b := daemon(t)
	if why, gap := b.Capabilities().Gap("egress"); gap {
		// A declared gap: warned, and the apps still deploy (no companion).
		loadImage(t)
		p := newProject(t, fmt.Sprintf(egressServices, image, "10.231.20.1"))
		_, errOut, code := p.run("compose", "--progress", "plain", "up", "-d")
		if code != 0 || !strings.Contains(errOut, "egress") {
			t.Fatalf("egress on %s (a declared gap: %s): exit %d, want it deployed with a warning:\n%s", b.Name(), why, code, errOut)
		}
		return
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the egress drill needs root (network namespaces)")
		}
		t.Skip("the egress drill needs root (network namespaces)")
	}
	loadImage(t)
	if b.Capabilities().Sidecars {
		agentImageOnNode(t)
	}
	sfx := make([]byte, 3)
	_, _ = rand.Read(sfx)
	id := hex.EncodeToString(sfx)
	// Addresses of this run's own (concurrent runs on other backends
	// must not share the blackhole route): target 10.231.N.1, veth
	// 10.232.N.0/30. The blackhole route claims N: a run holding it
	// already makes the add fail, and another N is tried.
	var n int
	var blackhole string
	for try := 0; ; try++ {
		n = 20 + (int(sfx[0])+try*37)%200
		blackhole = fmt.Sprintf("10.231.%d.0/24", n)
		out, err := exec.Command("ip", "route", "add", "blackhole", blackhole).CombinedOutput()
		if err == nil {
			break
		}
		if try == 20 {
			t.Fatalf("ip route add blackhole %s: %v: %s", blackhole, err, out)
		}
	}
	t.Cleanup(func() { _ = exec.Command("ip", "route", "del", "blackhole", blackhole).Run() })
	target, hostIP, peerIP := fmt.Sprintf("10.231.%d.1", n), fmt.Sprintf("10.232.%d.1", n), fmt.Sprintf("10.232.%d.2", n)
	ns := "cornus-egc-" + id
	sh(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	host, peer := "ceh"+id, "cep"+id
	sh(t, "ip", "link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	sh(t, "ip", "addr", "add", hostIP+"/30", "dev", host)
	sh(t, "ip", "link", "set", host, "up")
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", peerIP + "/30", "dev", peer},
		{"link", "set", peer, "up"},
		{"addr", "add", target + "/32", "dev", "lo"},
	} {
		sh(t, append([]string{"ip", "-n", ns}, args...)...)
	}

	// The target, in the client's namespace only; the denied port (9) and
	// the cluster-routed one (7) answer there too, so a wrong route through
	// the client would come back with data.
	for port, body := range map[int]string{8080: "client-side target\n", 9: "client-side port 9\n", 7: "client-side port 7\n"} {
		www := t.TempDir()
		if err := os.WriteFile(filepath.Join(www, "index.html"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		httpd := exec.Command("ip", "netns", "exec", ns, "busybox", "httpd", "-f", "-p", fmt.Sprintf("%s:%d", target, port), "-h", www)
		if err := httpd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = httpd.Process.Kill(); _ = httpd.Wait() })
		// It answers on the client's side (else a wrong route would look
		// right).
		for deadline := time.Now().Add(30 * time.Second); ; {
			out, _ := exec.Command("ip", "netns", "exec", ns, "sh", "-c", fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | busybox nc -w 2 %s %d`, target, port)).Output()
			if strings.HasSuffix(string(out), "\r\n\r\n"+body) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the client-side listener on %s:%d does not answer: %q", target, port, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// The server, on the veth's host side.
	dir := t.TempDir()
	tok, err := exec.Command(cornusBin, "token", "create", "--tokens-file", filepath.Join(dir, "tokens"), "e2e").Output()
	if err != nil {
		t.Fatal(err)
	}
	port := testnet.FreePort(t)
	url := fmt.Sprintf("http://%s:%d", hostIP, port)
	srv := exec.Command(cornusBin, "serve", "--listen", fmt.Sprintf("%s:%d", hostIP, port), "--insecure-listen",
		"--tokens-file", filepath.Join(dir, "tokens"))
	srv.Env = append(os.Environ(), "CORNUS_STATE_DIR="+filepath.Join(dir, "state"), "CORNUS_ADVERTISE_URL="+url)
	logs := startLogged(t, srv)

	p := newProject(t, fmt.Sprintf(egressServices, image, target), "CORNUS_SERVER="+url, "CORNUS_TOKEN="+strings.TrimSpace(string(tok)))
	p.prefix = []string{"ip", "netns", "exec", ns}
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, logs.String())
	}
	get := func(svc, script string) string {
		out, _, _ := p.run("compose", "exec", "-T", svc, "sh", "-c", script)
		return out
	}
	direct := func(port int) string {
		return fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 %s %d`, target, port)
	}
	viaProxy := func(port int) string {
		return fmt.Sprintf(`printf 'GET http://%s:%d/ HTTP/1.0\r\n\r\n' | nc -w 5 127.0.0.1 3128`, target, port)
	}
	if out := get("transparent", direct(8080)); !strings.Contains(out, "client-side target") {
		t.Errorf("transparent mode, client route: %q\nserver:\n%s", out, logs.String())
	}
	if out := get("proxy", viaProxy(8080)); !strings.Contains(out, "client-side target") {
		t.Errorf("proxy mode, client route: %q\nserver:\n%s", out, logs.String())
	}
	if out := get("transparent", direct(9)); out != "" {
		t.Errorf("transparent mode, denied destination answered: %q", out)
	}
	if out := get("proxy", viaProxy(9)); !strings.Contains(out, "403 Forbidden") || !strings.Contains(out, "denied (rules[0]") {
		t.Errorf("proxy mode, denied destination: %q", out)
	}
	// target:7 is routed cluster by a rule naming it (which the client
	// would dial, were it routed there): dialed from the workload's side,
	// where it is blackholed; it must not come back through the client.
	if out := get("transparent", direct(7)); out != "" {
		t.Errorf("transparent mode, cluster route reached the client's side: %q", out)
	}
	caretakerLogs := func() string {
		if b.Capabilities().Sidecars {
			return sidecarLogs(t, p.name, "transparent")
		}
		out, _, _ := p.run("compose", "logs", "transparent-caretaker")
		return out
	}
	if out := caretakerLogs(); !strings.Contains(out, `"route":"deny"`) {
		t.Errorf("the caretaker does not log the refusal:\n%s", out)
	}
	p.must("compose", "--progress", "quiet", "down", "-t", "1")
}

const egressServices = `
x-cornus-egress:
  mode: transparent
  rules:
    - pattern: "%[2]s:9"
      route: deny
    - pattern: "%[2]s:8080"
      route: client
    - pattern: "%[2]s:7"
      route: cluster
  default: cluster
services:
  transparent:
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
  proxy:
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    x-cornus-egress:
      mode: proxy
      rules:
        - pattern: "%[2]s:9"
          route: deny
        - pattern: "%[2]s:8080"
          route: client
      default: cluster
`

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", args, err, out)
	}
}

// startLogged starts cmd, keeps its stderr, waits for "serving" and stops
// it at the end.
func startLogged(t *testing.T, cmd *exec.Cmd) *strings.Builder {
	t.Helper()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &strings.Builder{}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			var l struct{ Msg string }
			if !once && json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "serving" {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("cornus serve did not start:\n%s", logs.String())
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	return logs
}
