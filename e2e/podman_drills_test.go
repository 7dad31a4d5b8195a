package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/internal/testnet"
)

// The podman fault drills (issue 9): the service killed under cornus, a
// name taken by a container podman made itself.

// podmanService is a podman API service of the drill's own, started by
// scripts/podman.sh on a private socket and state directory: killing it
// disturbs no other test on the shared service, while its containers,
// networks and volumes are podman's usual ones (same storage).
type podmanService struct {
	t     *testing.T
	state string
	sock  string
}

func startPodmanService(t *testing.T) *podmanService {
	t.Helper()
	state, err := os.MkdirTemp("", "cornus-podman-drill-")
	if err != nil {
		t.Fatal(err)
	}
	s := &podmanService{t: t, state: state, sock: filepath.Join(state, "podman.sock")}
	s.start()
	t.Cleanup(func() {
		if pid := s.pid(); pid > 0 && syscall.Kill(pid, syscall.SIGTERM) == nil {
			waitGone(t, pid)
		}
		if t.Failed() {
			t.Logf("the drill's podman service state (log) is kept in %s", state)
			return
		}
		os.RemoveAll(state)
	})
	return s
}

// start runs scripts/podman.sh for this service (idempotent).
func (s *podmanService) start() {
	s.t.Helper()
	cmd := exec.Command("../scripts/podman.sh")
	cmd.Env = append(os.Environ(), "CORNUS_PODMAN_STATE="+s.state, "CORNUS_PODMAN_SOCKET="+s.sock,
		"CORNUS_PODMAN_LOG="+filepath.Join(s.state, "podman.log"))
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("scripts/podman.sh: %v\n%s", err, out)
	}
}

func (s *podmanService) pid() int {
	b, _ := os.ReadFile(filepath.Join(s.state, "podman.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// kill ends the service with SIGKILL, as a crash would.
func (s *podmanService) kill() {
	s.t.Helper()
	pid := s.pid()
	if pid <= 0 {
		s.t.Fatal("no pid of the drill's podman service")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		s.t.Fatal(err)
	}
	waitGone(s.t, pid)
}

// env points cornus at this service.
func (s *podmanService) env() []string {
	return []string{"CORNUS_PODMAN_SOCKET=unix://" + s.sock}
}

// backend opens the podman backend on this service.
func (s *podmanService) backend() backends.Backend {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := fromenv.Open(ctx, append(os.Environ(), s.env()...))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = b.Close() })
	return b
}

const podmanDrillServices = `
services:
  a:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
    healthcheck: {test: ["CMD", "true"], interval: 300ms}
  b:
    image: cornus-test/busybox:1
    deploy: {replicas: 3}
    volumes: ["data:/data"]
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
  c:
    image: cornus-test/busybox:1
    depends_on: {a: {condition: service_healthy}}
    networks: [default, back]
    ports: ["127.0.0.1:${PORT}:8080"]
    command: ["httpd", "-f", "-p", "8080"]
networks:
  back: {}
volumes:
  data: {}
`

// The service killed in the middle of up: up fails naming podman's
// endpoint; once the service is back (scripts/podman.sh) the re-run
// converges, and down -v leaves no container, network or volume.
func TestPodmanDrillServiceKilledMidUp(t *testing.T) {
	onlyOn(t, "podman", "the drill kills a podman service")
	daemon(t)
	loadImage(t)
	svc := startPodmanService(t)
	port := testnet.FreePort(t)
	p := newProject(t, podmanDrillServices, append(svc.env(), fmt.Sprintf("PORT=%d", port))...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := exec.CommandContext(ctx, cornusBin, "compose", "--progress", "plain", "up", "-d")
	up.Dir, up.Env = p.dir, p.env
	stderr, err := up.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the service once up made its first container.
	var out strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Created") && strings.Contains(sc.Text(), "Container") {
			svc.kill()
			break
		}
	}
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	err = up.Wait()
	want := "podman at unix://" + svc.sock + " unreachable"
	if err == nil || !strings.Contains(out.String(), want) {
		t.Fatalf("up with the service killed: %v, want a failure naming %q:\n%s", err, want, out.String())
	}
	t.Logf("up, service killed:\n%s", out.String())

	svc.start()
	p.must("compose", "--progress", "quiet", "up", "-d", "--wait")
	ps := p.must("compose", "ps", "--format", "{{.Name}} {{.State}} {{.Status}}")
	if n := strings.Count(ps, " running"); n != 5 || !strings.Contains(ps, "(healthy)") {
		t.Fatalf("after the re-run, %d of 5 containers run (a healthy):\n%s", n, ps)
	}
	if body, err := testnet.HTTPGet(fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("c's published port after the re-run: %v %q", err, body)
	}
	ids := strings.Fields(p.must("compose", "ps", "-a", "-q"))
	p.must("compose", "--progress", "quiet", "down", "-v", "-t", "1")
	if c, n, v := leftovers(t, svc.backend(), p.name); c+n+v != 0 {
		t.Fatalf("left behind in podman: %d containers, %d networks, %d volumes", c, n, v)
	}
	assertNoPodmanOrphans(t, svc, p.name)
	assertHostClean(t, ids)
}

// assertNoPodmanOrphans: podman itself (its own CLI, on the drill's
// service) lists nothing of the project, labeled or not, and neither does
// its storage (a create cut short leaves a container there that the
// service does not know).
func assertNoPodmanOrphans(t *testing.T, svc *podmanService, project string) {
	t.Helper()
	remote := []string{"--url", "unix://" + svc.sock}
	for _, args := range [][]string{
		append(remote, "ps", "-a", "--format", "{{.Names}}"), append(remote, "network", "ls", "--format", "{{.Name}}"),
		append(remote, "volume", "ls", "--format", "{{.Name}}"), {"ps", "-a", "--external", "--format", "{{.Names}}"},
	} {
		cmd := exec.Command("podman", args...)
		cmd.Env = append(os.Environ(), "CONTAINERS_CONF=/etc/cornus/podman/containers.conf")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("podman %v: %v\n%s", args, err, out)
		}
		for _, l := range strings.Fields(string(out)) {
			if strings.HasPrefix(l, project) {
				t.Errorf("podman %s lists %s after down -v", strings.Join(args, " "), l)
			}
		}
	}
}

// A container named as cornus would name one, made by podman itself: up
// fails with a clear conflict naming it and leaves it alone.
func TestPodmanDrillNameConflict(t *testing.T) {
	onlyOn(t, "podman", "the drill makes a container with podman's own CLI")
	daemon(t)
	loadImage(t)
	p := newProject(t, "services:\n  a:\n    image: cornus-test/busybox:1\n    command: [\"sleep\", \"30\"]\n")
	url := os.Getenv("CORNUS_PODMAN_SOCKET")
	if !strings.Contains(url, "://") {
		url = "unix://" + url
	}
	taken := p.name + "-a-1"
	podman := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("podman", append([]string{"--url", url}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("podman %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	id := podman("create", "--name", taken, image, "true")
	t.Cleanup(func() { _ = exec.Command("podman", "--url", url, "rm", "-f", taken).Run() })

	_, errOut, code := p.run("compose", "--progress", "plain", "up", "-d")
	if code == 0 || !strings.Contains(errOut, "the name "+taken+" is taken") || !strings.Contains(errOut, "already in use") {
		t.Fatalf("up with %s taken: exit %d, want a conflict naming it:\n%s", taken, code, errOut)
	}
	t.Logf("up with the name taken:\n%s", errOut)
	p.must("compose", "--progress", "quiet", "down", "-v")
	if got := podman("inspect", "--format", "{{.Id}}", taken); got != id {
		t.Fatalf("podman's own container %s: %q after up and down, want %s untouched", taken, got, id)
	}
}
