package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testnet"

	"github.com/creack/pty"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
)

// proxyBackends are the backends the Docker API proxy is proven on with
// real clients: the one this run selects (CORNUS_DEPLOY_BACKEND; `make
// test` runs the package once per backend).
var proxyBackends = []string{fromenv.Selected(os.Environ())}

// proxy is a `cornus daemon docker` under test and the environment that
// points clients at it.
type proxy struct {
	t    *testing.T
	sock string
	env  []string // DOCKER_HOST at the proxy, a private DOCKER_CONFIG
	dir  string   // scratch directory clients may bind-mount
}

// startProxy runs the built binary as `cornus daemon docker` on a fresh
// socket with the given backend; binds are allowed under a scratch dir
// unless env (KEY=VALUE, applied last) says otherwise.
func startProxy(t *testing.T, backend string, env ...string) *proxy {
	t.Helper()
	base := t.TempDir()
	p := &proxy{t: t, sock: filepath.Join(base, "docker.sock"), dir: filepath.Join(base, "work")}
	if err := os.MkdirAll(filepath.Join(base, "config", "cli-plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, cornusBin, "daemon", "docker", "--listen", "unix://"+p.sock)
	// Stopped as a service manager stops it, so it stops what it started
	// (a buildkitd) before it exits.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Env = append(append(os.Environ(), "CORNUS_DEPLOY_BACKEND="+backend, "CORNUS_ALLOW_BIND_SOURCES="+p.dir), env...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("proxy log:\n%s", logs.String())
		}
	})
	// Ready once it accepts: the socket file appears at bind, a moment
	// before listen, and a dial in between is refused.
	for i := 0; ; i++ {
		if c, err := net.Dial("unix", p.sock); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			t.Fatalf("proxy did not start:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.env = append(os.Environ(), "DOCKER_HOST=unix://"+p.sock, "DOCKER_CONFIG="+filepath.Join(base, "config"))
	return p
}

// tool finds a client program or fails (CI) / skips with how to get it.
func tool(t *testing.T, name, how string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %s", name, how)
		}
		t.Skipf("%s not found: %s", name, how)
	}
	return path
}

// installCompose makes `docker compose` (v5.6.0, built once and cached by
// scripts/docker-compose.sh) available to the proxy's docker CLI config.
func (p *proxy) installCompose() { p.installPlugin("docker-compose", "../scripts/docker-compose.sh") }

// installPlugin links the docker CLI plugin a script prints (building it
// once) into the proxy's docker CLI config.
func (p *proxy) installPlugin(name, script string) {
	p.t.Helper()
	out, err := exec.Command(script).Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			p.t.Fatalf("%s: %v", script, err)
		}
		p.t.Skipf("%s unavailable (%s: %v)", name, script, err)
	}
	link := filepath.Join(filepath.Dir(p.sock), "config", "cli-plugins", name)
	if err := os.Symlink(strings.TrimSpace(string(out)), link); err != nil && !os.IsExist(err) {
		p.t.Fatal(err)
	}
}

// run executes a client with the proxy's environment in dir.
func (p *proxy) run(dir string, name string, args ...string) (string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, p.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("%s %v: %v", name, args, err)
	}
	return out.String(), code
}

func (p *proxy) must(dir, name string, args ...string) string {
	p.t.Helper()
	out, code := p.run(dir, name, args...)
	if code != 0 {
		p.t.Fatalf("%s %s: exit %d\n%s", name, strings.Join(args, " "), code, out)
	}
	return out
}

// TestDockerAPIClients proves the proxy with the clients people use: the
// docker CLI, docker compose and the devcontainer CLI, against DOCKER_HOST
// pointed at `cornus daemon docker`, on each backend (issue #4).
func TestDockerAPIClients(t *testing.T) {
	daemon(t)
	loadImage(t)
	for _, backend := range proxyBackends {
		t.Run(backend, func(t *testing.T) {
			p := startProxy(t, backend)
			t.Run("docker CLI", func(t *testing.T) { p.t = t; dockerCLIScenario(p) })
			t.Run("docker compose", func(t *testing.T) { p.t = t; composeScenario(p) })
			t.Run("docker compose recreate", func(t *testing.T) { p.t = t; composeRecreateScenario(p) })
			t.Run("devcontainer image", func(t *testing.T) { p.t = t; devcontainerImageScenario(p) })
			t.Run("devcontainer compose", func(t *testing.T) { p.t = t; devcontainerComposeScenario(p) })
		})
	}
}

func dockerCLIScenario(p *proxy) {
	t := p.t
	docker := tool(t, "docker", "the machine image ships the docker CLI 28")
	name := fmt.Sprintf("cli%d", time.Now().UnixNano()%1e6)
	t.Cleanup(func() { p.run("", docker, "rm", "-f", name) })
	port := testnet.FreePort(t)
	p.must("", docker, "run", "-d", "--name", name, "-p", fmt.Sprintf("127.0.0.1:%d:8080", port), image,
		"sh", "-c", "mkdir -p /w && echo via-proxy > /w/index.html && echo started && exec httpd -f -p 8080 -h /w")
	waitHTTP(t, fmt.Sprintf("127.0.0.1:%d", port), "via-proxy")
	if ps := p.must("", docker, "ps"); !strings.Contains(ps, name) || !strings.Contains(ps, fmt.Sprintf("127.0.0.1:%d->8080/tcp", port)) {
		t.Errorf("docker ps:\n%s", ps)
	}
	if logs := p.must("", docker, "logs", name); !strings.Contains(logs, "started") {
		t.Errorf("docker logs: %q", logs)
	}
	// docker stats through the proxy (issue 26: it answered 501).
	stats, code := p.run("", docker, "stats", "--no-stream", "--format", "{{.Name}} {{.MemUsage}} {{.PIDs}}", name)
	if daemon(t).Capabilities().Has(backends.FeatureStats) {
		if f := strings.Fields(stats); code != 0 || len(f) < 3 || f[0] != name || strings.HasPrefix(f[1], "0B") || f[len(f)-1] == "0" {
			t.Errorf("docker stats --no-stream: exit %d, %q", code, stats)
		}
	} else if code == 0 || !strings.Contains(stats, "stats is not supported") {
		t.Errorf("docker stats on a backend without stats: exit %d, %q", code, stats)
	}

	// docker exec -it through a real pty: a TTY inside, output back out.
	c := exec.Command(docker, "exec", "-it", name, "sh", "-c", "tty; echo $((6*7))")
	c.Env = p.env
	f, err := pty.Start(c)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, _ = io.Copy(&out, f) // until the process closes the pty (EIO)
	_ = c.Wait()
	f.Close()
	if !strings.Contains(out.String(), "/dev/pts/") || !strings.Contains(out.String(), "42") {
		t.Errorf("docker exec -it output %q", out.String())
	}
	if out, code := p.run("", docker, "exec", name, "sh", "-c", "exit 7"); code != 7 {
		t.Errorf("exec exit code %d (%s)", code, out)
	}

	// docker cp both ways.
	src := filepath.Join(p.dir, "in.txt")
	if err := os.WriteFile(src, []byte("copied-in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.must("", docker, "cp", src, name+":/tmp/in.txt")
	if got := p.must("", docker, "exec", name, "cat", "/tmp/in.txt"); got != "copied-in\n" {
		t.Errorf("after cp in: %q", got)
	}
	dst := filepath.Join(p.dir, "out.html")
	p.must("", docker, "cp", name+":/w/index.html", dst)
	if b, _ := os.ReadFile(dst); string(b) != "via-proxy\n" {
		t.Errorf("after cp out: %q", b)
	}
	exportCommitScenario(p, docker, name)
	since := time.Now().Add(-time.Minute).Unix()
	// A backend without pause (kubernetes) says so instead.
	canPause := daemon(t).Capabilities().Has(backends.FeaturePause)
	if canPause {
		p.must("", docker, "pause", name)
		if st := p.must("", docker, "inspect", "-f", "{{.State.Status}}", name); strings.TrimSpace(st) != "paused" {
			t.Errorf("after pause: %q", st)
		}
		p.must("", docker, "unpause", name)
	} else if out, code := p.run("", docker, "pause", name); code == 0 || !strings.Contains(out, "pause is not supported") {
		t.Errorf("docker pause on a backend without pause: exit %d: %s", code, out)
	}
	if top := p.must("", docker, "top", name); !strings.Contains(top, "httpd") {
		t.Errorf("docker top:\n%s", top)
	}
	p.must("", docker, "stop", "-t", "1", name)
	events := p.must("", docker, "events", "--since", fmt.Sprint(since), "--until", fmt.Sprint(time.Now().Unix()+1),
		"--filter", "container="+name, "--format", "{{.Action}}")
	for _, want := range []string{"create", "start", "pause", "unpause", "die"} {
		if !canPause && strings.Contains(want, "pause") {
			continue
		}
		if !strings.Contains(events, want) {
			t.Errorf("docker events lacks %q:\n%s", want, events)
		}
	}
	p.must("", docker, "rm", name)
	if ps := p.must("", docker, "ps", "-a", "--filter", "name="+name, "-q"); ps != "" {
		t.Errorf("container left after rm: %q", ps)
	}
}

func composeScenario(p *proxy) {
	t := p.t
	docker := tool(t, "docker", "the machine image ships the docker CLI 28")
	p.installCompose()
	dir := filepath.Join(p.dir, "compose3")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	port := testnet.FreePort(t)
	compose := strings.ReplaceAll(threeServices, "${WEB_PORT}", fmt.Sprint(port))
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(compose), 0o644); err != nil {
		t.Fatal(err)
	}
	// A name of its own: a run killed earlier may have left its one-off
	// containers under a fixed one.
	proj := uniqueName("proxy3-")
	dc := func(args ...string) string {
		return p.must(dir, docker, append([]string{"compose", "-p", proj}, args...)...)
	}
	t.Cleanup(func() { p.run(dir, docker, "compose", "-p", proj, "down", "-v", "-t", "1") })

	dc("up", "-d", "--wait")
	waitHTTP(t, fmt.Sprintf("127.0.0.1:%d", port), "hello-e2e")
	if ps := dc("ps"); !strings.Contains(ps, proj+"-web-1") || !strings.Contains(ps, "(healthy)") || !strings.Contains(ps, proj+"-worker-1") {
		t.Errorf("compose ps:\n%s", ps)
	}
	if logs := dc("logs", "--tail", "3", "app"); !strings.Contains(logs, "app-tick") {
		t.Errorf("compose logs:\n%s", logs)
	}
	if out, code := p.run(dir, docker, "compose", "-p", proj, "exec", "-T", "worker", "sh", "-c", "test -s /data/ticks && echo ticking; exit 5"); code != 5 || !strings.Contains(out, "ticking") {
		t.Errorf("compose exec: exit %d, %q", code, out)
	}
	if out := dc("run", "--rm", "app", "echo", "from-run"); !strings.Contains(out, "from-run") {
		t.Errorf("compose run --rm: %q", out)
	}
	if up := dc("up", "-d"); strings.Contains(up, "Recreate") {
		t.Errorf("a second up recreated containers (config hash, networks or volumes not round-tripped):\n%s", up)
	}
	// restart starts the process again: a later StartedAt.
	startedAt := func() time.Time {
		out := strings.TrimSpace(p.must(dir, docker, "inspect", "-f", "{{.State.StartedAt}}", proj+"-app-1"))
		at, err := time.Parse(time.RFC3339Nano, out)
		if err != nil {
			t.Fatalf("docker inspect StartedAt %q: %v", out, err)
		}
		return at
	}
	first := startedAt()
	dc("restart", "app")
	if again := startedAt(); !again.After(first) {
		t.Errorf("compose restart did not start app again: started at %s, before %s", again, first)
	}
	if top := dc("top", "web"); !strings.Contains(top, "httpd") {
		t.Errorf("compose top:\n%s", top)
	}
	if got := dc("port", "web", "8080"); !strings.Contains(got, fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Errorf("compose port: %q", got)
	}
	if imgs := dc("images"); !strings.Contains(imgs, "cornus-test/busybox") {
		t.Errorf("compose images:\n%s", imgs)
	}
	if daemon(t).Capabilities().Has(backends.FeaturePause) {
		dc("pause", "worker")
		dc("unpause", "worker")
	}
	dc("kill", "app")
	if ps := dc("ps", "-a", "app"); !strings.Contains(ps, "Exited") {
		t.Errorf("after compose kill:\n%s", ps)
	}
	dc("down", "-v")
	if left := p.must(dir, docker, "ps", "-a", "-q", "--filter", "label=com.docker.compose.project="+proj); left != "" {
		t.Errorf("containers left: %q", left)
	}
	if left := p.must(dir, docker, "volume", "ls", "-q", "--filter", "label=com.docker.compose.project="+proj); left != "" {
		t.Errorf("volumes left: %q", left)
	}
}

func devcontainerImageScenario(p *proxy) {
	t := p.t
	devcontainer := tool(t, "devcontainer", "scripts/setup.sh installs it (npm install -g @devcontainers/cli)")
	docker := tool(t, "docker", "the machine image ships the docker CLI 28")
	ws := filepath.Join(p.dir, "dcimage")
	// The image flavour, the UID update left as the CLI defaults it: the
	// CLI builds a small derived image through the proxy (even as root).
	// A backend that declares builds a gap cannot: the update is off.
	uid := ""
	if _, gap := daemon(t).Capabilities().Gap("build"); gap {
		uid = `"updateRemoteUserUID": false,`
	}
	writeFiles(t, ws, map[string]string{
		".devcontainer/devcontainer.json": `{
  "image": "cornus-test/busybox:1",
  "remoteUser": "app",
  ` + uid + `
  "containerEnv": {"GREETING": "hi"},
}`,
	})
	t.Cleanup(func() {
		removeByLabel(p, docker, "devcontainer.local_folder="+ws)
		removeImages(p, docker, "vsc-dcimage-*")
	})
	p.must(ws, devcontainer, "up", "--workspace-folder", ws)
	out := p.must(ws, devcontainer, "exec", "--workspace-folder", ws, "sh", "-c", "echo ok $GREETING $(id -un) $(pwd)")
	if !strings.Contains(out, "ok hi app /workspaces/dcimage") {
		t.Errorf("devcontainer exec: %q", out)
	}
}

func devcontainerComposeScenario(p *proxy) {
	t := p.t
	devcontainer := tool(t, "devcontainer", "scripts/setup.sh installs it (npm install -g @devcontainers/cli)")
	docker := tool(t, "docker", "the machine image ships the docker CLI 28")
	p.installCompose()
	ws := filepath.Join(p.dir, "dccompose")
	writeFiles(t, ws, map[string]string{
		".devcontainer/docker-compose.yml": `services:
  dev:
    image: cornus-test/busybox:1
    user: app
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
    volumes: ["..:/workspace"]
    depends_on: [db]
  db:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
`,
		".devcontainer/devcontainer.json": `{
  "dockerComposeFile": "docker-compose.yml",
  "service": "dev",
  "workspaceFolder": "/workspace",
  "remoteUser": "app",
  "updateRemoteUserUID": false
}`,
	})
	t.Cleanup(func() {
		p.run(ws, docker, "compose", "-p", "dccompose_devcontainer", "-f", filepath.Join(ws, ".devcontainer", "docker-compose.yml"), "down", "-v", "-t", "1")
	})
	p.must(ws, devcontainer, "up", "--workspace-folder", ws)
	// busybox nslookup fails when any search domain lacks the name (a
	// cluster's pods search several); an answer is what counts. One query
	// can go unanswered on a loaded host (busybox asks once): ask for up
	// to a minute.
	out := p.must(ws, devcontainer, "exec", "--workspace-folder", ws, "sh", "-c", "echo ok $(id -un) $(pwd); "+
		"end=$(($(date +%s) + 60)); while [ $(date +%s) -lt $end ]; do nslookup db 2>/dev/null | grep -q '^Name:' && { echo db-resolves; break; }; sleep 1; done")
	if !strings.Contains(out, "ok app /workspace") || !strings.Contains(out, "db-resolves") {
		t.Errorf("devcontainer exec: %q", out)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// removeImages removes the images a reference pattern matches (the
// devcontainer CLI's vsc-<folder>-<hash>, -uid, -features).
func removeImages(p *proxy, docker, pattern string) {
	ids, _ := p.run("", docker, "images", "-q", "--filter", "reference="+pattern)
	for _, id := range strings.Fields(ids) {
		p.run("", docker, "rmi", "-f", id)
	}
}

func removeByLabel(p *proxy, docker, label string) {
	ids, _ := p.run("", docker, "ps", "-aq", "--filter", "label="+label)
	for _, id := range strings.Fields(ids) {
		p.run("", docker, "rm", "-f", id)
	}
}

func waitHTTP(t *testing.T, addr, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		body, err := testnet.HTTPGet(addr)
		if err == nil && strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v %q", addr, err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exportCommitScenario: docker export and docker commit through the
// proxy, or their refusal by name on a backend without them.
func exportCommitScenario(p *proxy, docker, name string) {
	t := p.t
	caps := daemon(t).Capabilities()
	tarFile := filepath.Join(p.dir, "export.tar")
	out, code := p.run("", docker, "export", "-o", tarFile, name)
	if caps.Has(backends.FeatureExport) {
		data, err := os.ReadFile(tarFile)
		if names := tarNames(t, string(data)); code != 0 || err != nil || !slices.Contains(names, "w/index.html") {
			t.Errorf("docker export: exit %d %v, w/index.html not among %d entries: %s", code, err, len(names), out)
		}
	} else if code == 0 || !strings.Contains(out, "export is not supported") {
		t.Errorf("docker export on a backend without export: exit %d: %s", code, out)
	}
	ref := "cornus-test/proxy-commit-" + name + ":1"
	out, code = p.run("", docker, "commit", "-c", "ENV COMMITTED=yes", name, ref)
	if !caps.Has(backends.FeatureCommit) {
		if code == 0 || !strings.Contains(out, "commit is not supported") {
			t.Errorf("docker commit on a backend without commit: exit %d: %s", code, out)
		}
		return
	}
	t.Cleanup(func() { p.run("", docker, "rmi", ref) })
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "sha256:") {
		t.Errorf("docker commit: exit %d: %s", code, out)
	}
	if env := p.must("", docker, "image", "inspect", "-f", "{{json .Config.Env}}", ref); !strings.Contains(env, "COMMITTED=yes") {
		t.Errorf("the committed image's env: %s", env)
	}
}
