package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testnet"

	"github.com/cornus-dev/cornus/backends"
)

// served is a `cornus serve` of the built binary on loopback, over the
// selected backend, with one client token.
type served struct {
	t     *testing.T
	cmd   *exec.Cmd
	url   string
	token string
	dir   string
	logs  *strings.Builder
}

func startServer(t *testing.T, dir string) *served {
	t.Helper()
	s := &served{t: t, dir: dir}
	if tok, err := os.ReadFile(filepath.Join(dir, "token")); err == nil {
		s.token = string(tok)
	} else {
		out, err := exec.Command(cornusBin, "token", "create", "--tokens-file", filepath.Join(dir, "tokens"), "e2e").Output()
		if err != nil {
			t.Fatal(err)
		}
		s.token = strings.TrimSpace(string(out))
		_ = os.WriteFile(filepath.Join(dir, "token"), []byte(s.token), 0o600)
	}
	s.start()
	return s
}

func (s *served) start() {
	t := s.t
	t.Helper()
	// A restart listens where the server did: its clients' session agents
	// redial that address to resume their sessions.
	listen := "127.0.0.1:0"
	if s.url != "" {
		listen = strings.TrimPrefix(s.url, "http://")
	}
	s.cmd = exec.Command(cornusBin, "serve", "--listen", listen, "--tokens-file", filepath.Join(s.dir, "tokens"))
	s.cmd.Env = append(os.Environ(), "CORNUS_STATE_DIR="+filepath.Join(s.dir, "state"), "CORNUS_SESSION_GRACE="+sessionGrace.String())
	stderr, _ := s.cmd.StderrPipe()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.logs = &strings.Builder{}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.logs.WriteString(line + "\n")
			var l struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving" {
				urls <- l.URL
			}
		}
	}()
	select {
	case s.url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatalf("cornus serve did not start:\n%s", s.logs.String())
	}
	cmd := s.cmd
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
}

// sessionGrace is the e2e servers' CORNUS_SESSION_GRACE: how long a
// restarted server keeps a session's deployment for its client.
const sessionGrace = 3 * time.Second

// kill SIGKILLs the server.
func (s *served) kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// env points the CLI at the server.
func (s *served) env() []string {
	return []string{"CORNUS_SERVER=" + s.url, "CORNUS_TOKEN=" + s.token}
}

// TestServerCompose (issue 11): the compose scenario from a client
// through cornus serve, then exec, logs, port-forward and the SOCKS5
// tunnel, and down -v leaves nothing.
func TestServerCompose(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	srv := startServer(t, t.TempDir())
	port := testnet.FreePort(t)
	p := newProject(t, lifecycleServices, append(srv.env(), fmt.Sprintf("WEB_PORT=%d", port))...)
	// cornus login keeps the token for the user alone; image load goes
	// into the server's backend.
	cfg := t.TempDir()
	login := exec.Command(cornusBin, "login", srv.url)
	login.Env, login.Stdin = append(os.Environ(), "XDG_CONFIG_HOME="+cfg), strings.NewReader(srv.token+"\n")
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("login: %v\n%s", err, out)
	}
	if st, err := os.Stat(filepath.Join(cfg, "cornus", "servers.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("login file: %v %v", st, err)
	}
	p.env = append(p.env, "XDG_CONFIG_HOME="+cfg, "CORNUS_TOKEN=")
	if out, errOut, code := p.run("image", "load", "-i", imageTar(t, image)); code != 0 && strings.Contains(errOut, "on the cluster's nodes already") && hasImage(t, image) {
		// A backend whose nodes pull images themselves (kubernetes) keeps
		// what the nodes have (scripts/k8s.sh imported the image) out of
		// the server's registry: the operator's, shared as it is.
	} else if code != 0 || !strings.Contains(out, "Loaded image: "+image) {
		t.Errorf("image load --server: exit %d: %q %q", code, out, errOut)
	}
	p.must("compose", "--progress", "plain", "up", "-d", "--wait")
	if ps := p.must("compose", "ps"); !strings.Contains(ps, "(healthy)") || !strings.Contains(ps, p.name+"-app-1") {
		t.Errorf("ps through the server:\n%s", ps)
	}
	if got := p.must("compose", "exec", "-T", "app", "cat", "/data/schema"); got != "migrated\n" {
		t.Errorf("exec through the server: %q", got)
	}
	if _, _, code := p.run("compose", "exec", "-T", "worker", "sh", "-c", "exit 6"); code != 6 {
		t.Errorf("exec exit code %d, want 6", code)
	}
	if logs := p.must("compose", "logs", "--tail", "2", "app"); !strings.Contains(logs, "app-tick") {
		t.Errorf("logs through the server:\n%s", logs)
	}
	// port-forward and tunnel reach web's port 8080 from this side.
	local := testnet.FreePort(t)
	stop := p.background("port-forward", "web", fmt.Sprintf("%d:8080", local))
	waitHTTP(t, fmt.Sprintf("127.0.0.1:%d", local), "hello-e2e")
	stop()
	socks := testnet.FreePort(t)
	stop = p.background("tunnel", "--listen", fmt.Sprintf("127.0.0.1:%d", socks))
	if body := socksGet(t, fmt.Sprintf("127.0.0.1:%d", socks), "web", 8080); !strings.Contains(body, "hello-e2e") {
		t.Errorf("through the tunnel: %q", body)
	}
	stop()
	ids := strings.Fields(p.must("compose", "ps", "-a", "-q"))
	p.must("compose", "--progress", "plain", "down", "-v")
	if c, n, v := leftovers(t, b, p.name); c+n+v != 0 {
		t.Fatalf("left behind: %d containers, %d networks, %d volumes", c, n, v)
	}
	assertHostClean(t, ids)
}

// Killing the client that holds a deployment's session removes the
// deployment promptly (the server sees the connection end and tears
// down with a 2 s grace: a few seconds; the bound is 30 s for loaded
// hosts); a server killed mid-session keeps, when it starts again, the
// deployments of sessions whose clients come back (their agents resume
// them), removes those of sessions whose clients died after the grace
// (issue 28), and keeps detached ones.
func TestServerSessionDrills(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	dir := t.TempDir()
	srv := startServer(t, dir)
	sleeper := "services:\n  app:\n    image: " + image + "\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 0.2; done\"]\n"

	// kill -9 the client: the agent holding `up -d`'s session.
	p := newProject(t, sleeper, srv.env()...)
	p.must("compose", "--progress", "quiet", "up", "-d")
	agent := sessionAgent(t, p.name)
	if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for c, _, _ := leftovers(t, b, p.name); c > 0; c, _, _ = leftovers(t, b, p.name) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d containers still there %v after the client was killed", c, time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the session's containers were gone %v after its client was killed", time.Since(start).Round(10*time.Millisecond))

	// kill -9 the server mid-session, with one attached deployment whose
	// client lives on, one whose client dies while the server is down, and
	// one detached.
	attached := newProject(t, sleeper, srv.env()...)
	attached.must("compose", "--progress", "quiet", "up", "-d")
	orphaned := newProject(t, sleeper, srv.env()...)
	orphaned.must("compose", "--progress", "quiet", "up", "-d")
	detached := newProject(t, sleeper, srv.env()...)
	_ = os.WriteFile(filepath.Join(detached.dir, "deploy.yaml"), []byte("name: "+detached.name+"\nservices:\n  app:\n    image: "+image+"\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 0.2; done\"]\n"), 0o644)
	detached.must("deploy", "--progress", "quiet", "--detach", "-f", "deploy.yaml")
	srv.kill()
	if err := syscall.Kill(sessionAgent(t, orphaned.name), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.start()
	// The session whose client died goes after the grace; the living
	// client's agent resumed its session, which keeps its deployment.
	start = time.Now()
	for c, _, _ := leftovers(t, b, orphaned.name); c > 0; c, _, _ = leftovers(t, b, orphaned.name) {
		if time.Since(start) > sessionGrace+30*time.Second {
			t.Fatalf("the restarted server kept %d containers of a session whose client died, %v after it started", c, time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the dead client's deployment was gone %v after the restart (grace %v)", time.Since(start).Round(10*time.Millisecond), sessionGrace)
	if c, _, _ := leftovers(t, b, attached.name); c != 1 {
		t.Fatalf("the restarted server left %d containers of the session its client resumed, want 1", c)
	}
	if out := attached.must("compose", "ps", "--format", "{{.Service}} {{.State}}"); !strings.Contains(out, "app running") {
		t.Fatalf("ps of the resumed deployment:\n%s", out)
	}
	if c, _, _ := leftovers(t, b, detached.name); c != 1 {
		t.Fatalf("the restarted server left %d containers of a detached deployment, want 1", c)
	}
	// The resumed session is the deployment's again: killing its client
	// takes it down, as before the restart.
	if err := syscall.Kill(sessionAgent(t, attached.name), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for c, _, _ := leftovers(t, b, attached.name); c > 0; c, _, _ = leftovers(t, b, attached.name) {
		if time.Since(start) > time.Minute {
			t.Fatalf("%d containers of the resumed session still there after its client was killed", c)
		}
		time.Sleep(100 * time.Millisecond)
	}
	detached.must("deploy", "--progress", "quiet", "--delete", "-f", "deploy.yaml")
}

// sessionAgent is the pid of the agent holding project's session.
func sessionAgent(t *testing.T, project string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 2 && args[1] == "session-agent" && args[len(args)-1] == project {
			var pid int
			if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(p)), "%d", &pid); err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no session agent for %s", project)
	return 0
}

// background runs cornus in the project until the returned func stops it.
func (p *project) background(args ...string) func() {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, cornusBin, args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	stop := func() { cancel(); _ = cmd.Wait() }
	p.t.Cleanup(stop)
	return stop
}

// socksGet fetches / from host:port through a SOCKS5 proxy at proxy.
func socksGet(t *testing.T, proxy, host string, port int) string {
	t.Helper()
	var c net.Conn
	var err error
	for i := 0; i < 50; i++ {
		if c, err = net.Dial("tcp", proxy); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("tunnel: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len(host))}, host...)
	req = append(req, byte(port>>8), byte(port))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 12)
	if _, err := io.ReadFull(c, reply); err != nil || reply[0] != 5 || reply[1] != 0 || reply[3] != 0 {
		t.Fatalf("SOCKS5 handshake: %v %v", reply, err)
	}
	fmt.Fprintf(c, "GET / HTTP/1.0\r\n\r\n")
	body, _ := io.ReadAll(c)
	return string(body)
}

// eachWay runs f twice, as subtests: with env empty (the lane's backend
// here) and with srv's (through the server). One after the other: at once
// (CI35) the podman lane took 14m45s against about 11 in turn, four lanes
// sharing two cores.
func eachWay(t *testing.T, srv *served, f func(t *testing.T, env []string)) {
	t.Helper()
	for _, where := range []string{"local", "server"} {
		t.Run(where, func(t *testing.T) {
			var env []string
			if where == "server" {
				env = srv.env()
			}
			f(t, env)
		})
	}
}

// refusedWithout reports whether b lacks feature, after checking that
// the verb args fail saying "WHAT is not supported by the B backend".
func refusedWithout(t *testing.T, b backends.Backend, feature backends.Feature, what string, p *project, args ...string) bool {
	t.Helper()
	if b.Capabilities().Has(feature) {
		return false
	}
	_, errOut, code := p.run(args...)
	if code == 0 || !strings.Contains(errOut, what+" is not supported by the "+b.Name()+" backend") {
		t.Fatalf("%s on a backend without it: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return true
}
