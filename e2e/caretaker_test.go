package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testnet"
	"golang.org/x/sys/unix"
)

// Issue 12, remote mode (dockerhost CORNUS_DOCKER_REMOTE=1, containerd
// CORNUS_CONTAINERD_REMOTE=1): the server mounts nothing on its host; each
// replica's caretaker companion mounts the client's exports (forwarded by
// the server from the client's session) in a volume it shares with the
// app. A container's write lands on the client, the client's edit reaches
// the container, :ro refuses writes, down leaves nothing mounted.
func TestRemoteModeLocalMounts(t *testing.T) {
	skipBesideTheApp(t, "a client-local mount")
	if daemon(t).Capabilities().Sidecars {
		t.Skip("the caretaker is its replica's sidecar here (mounts in pod emptyDirs, not on this host): TestSidecarLocalMounts")
	}
	srv := startRemoteServer(t)
	b := daemon(t)
	p := newProject(t, `
services:
  app:
    image: `+image+`
    init: true
    user: "1000"
    volumes: ["./src:/work", "./cfg:/cfg:ro", "./one.conf:/etc/one.conf"]
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
	writeFile(t, filepath.Join(p.dir, "one.conf"), "one\n")
	start := time.Now()
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	t.Logf("up with 3 client-local mounts through the companion: %v", time.Since(start).Round(10*time.Millisecond))
	if m := mountedFor(t, p.name); len(m) == 0 {
		t.Errorf("the companion's mounts do not show on the runtime's host (propagation)")
	}
	// The companion mounts with SYS_ADMIN and nothing else.
	if st := companionProc(t, p, "app"); st.capEff != 1<<capSysAdmin || !st.noNewPrivs || !st.roRoot {
		t.Errorf("the mounting companion (pid %d): CapEff %#x (want SYS_ADMIN only, %#x), no-new-privileges %v, read-only root %v",
			st.pid, st.capEff, uint64(1<<capSysAdmin), st.noNewPrivs, st.roRoot)
	}
	if got := p.must("compose", "exec", "-T", "app", "sh", "-c", "echo from-container > /work/out && cat /work/seed /etc/one.conf /cfg/app.ini"); got != "v1\none\nro\n" {
		t.Errorf("read through the mounts: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "src", "out")); err != nil || string(b) != "from-container\n" {
		t.Errorf("the container's write on the client: %q %v", b, err)
	}
	writeFile(t, filepath.Join(p.dir, "src", "seed"), "v2 edited on the client\n")
	start = time.Now()
	waitFor(t, 5*time.Second, "the client's edit in the container", func() bool {
		out, _, _ := p.run("compose", "exec", "-T", "app", "cat", "/work/seed")
		return out == "v2 edited on the client\n"
	})
	t.Logf("the client's edit seen in the container after %v", time.Since(start).Round(10*time.Millisecond))
	if out, _, code := p.run("compose", "exec", "-T", "app", "sh", "-c", "echo x > /cfg/new"); code == 0 {
		t.Errorf(":ro took a write: %q", out)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "cfg", "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(":ro export on the client got a file: %v", err)
	}
	// Escapes stay confined on the client's side.
	writeFile(t, filepath.Join(p.dir, "outside"), "secret-outside\n")
	escape := "ln -s " + filepath.Join(p.dir, "outside") + " /work/abs; ln -s ../outside /work/rel; cat /work/abs /work/rel /work/../outside 2>&1; true"
	if out, _, _ := p.run("compose", "exec", "-T", "app", "sh", "-c", escape); strings.Contains(out, "secret-outside") {
		t.Errorf("an escape read the client's file outside the export:\n%s", out)
	}
	p.must("compose", "--progress", "quiet", "down")
	if m := mountedFor(t, p.name); len(m) != 0 {
		t.Errorf("still mounted after down: %v", m)
	}
	if c, _, v := leftovers(t, b, p.name); c != 0 || v != 0 {
		t.Errorf("%d containers, %d volumes after down", c, v)
	}
}

// Remote mode's session drop: kill -9 the client of `cornus deploy
// --local-mount` while its container writes through the mount; the
// server removes the containers (companion included, which unmounts) and
// nothing stays mounted on the runtime's host.
func TestRemoteModeKilledClient(t *testing.T) {
	skipBesideTheApp(t, "a client-local mount")
	if daemon(t).Capabilities().Sidecars {
		t.Skip("the caretaker is its replica's sidecar here (mounts in pod emptyDirs, not on this host): TestSidecarLocalMounts")
	}
	srv := startRemoteServer(t)
	b := daemon(t)
	p := newProject(t, "services:\n  app:\n    image: "+image+"\n", srv.env()...)
	if err := os.Mkdir(filepath.Join(p.dir, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(p.dir, "deploy.yaml"), "name: "+p.name+"\nservices:\n  app:\n    image: "+image+
		"\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do dd if=/dev/zero bs=64k count=16 2>/dev/null >> /work/log; done\"]\n")
	cmd := exec.Command(cornusBin, "deploy", "--progress", "quiet", "-f", "deploy.yaml", "--local-mount", "./w:/work")
	cmd.Dir, cmd.Env = p.dir, p.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	log := filepath.Join(p.dir, "w", "log")
	deadline := time.Now().Add(60 * time.Second)
	for st, err := os.Stat(log); err != nil || st.Size() <= 4<<20; st, err = os.Stat(log) {
		select {
		case <-exited:
			t.Fatalf("deploy --local-mount exited before the drill:\n%s\nserver:\n%s", errb.String(), srv.logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("the container did not write through the mount within 60 s:\n%s\nserver:\n%s", errb.String(), srv.logs.String())
		}
	}
	if len(mountedFor(t, p.name)) == 0 {
		t.Errorf("the companion's mount does not show on the runtime's host")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	start := time.Now()
	var left string
	for deadline := start.Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, _, v := leftovers(t, b, p.name)
		m := mountedFor(t, p.name)
		if c == 0 && v == 0 && len(m) == 0 {
			break
		}
		left = fmt.Sprintf("%d containers, %d volumes, mounted %v", c, v, m)
		if time.Now().After(deadline) {
			t.Fatalf("after kill -9, still %s 30 s later\nserver:\n%s", left, srv.logs.String())
		}
	}
	t.Logf("kill -9 mid-write (remote mode): containers and shared volume removed, nothing mounted, %v after the client died (%d MiB written)",
		time.Since(start).Round(10*time.Millisecond), fileSize(log)>>20)
}

// Security round 2, item 6, remote mode: the client replaces the file of
// a single-file client-local mount with a symlink to a file only the
// runtime's host has (root-only, with a marker). Restarting the app must
// not bind that file: the app binds the companion's pin of the regular
// file (a bind of its inode), never its path in the mount, which the
// runtime resolves on its host.
func TestRemoteModeSingleFileFollowsNoLink(t *testing.T) {
	skipBesideTheApp(t, "a client-local mount")
	if daemon(t).Capabilities().Sidecars {
		t.Skip("the caretaker is its replica's sidecar here: single-file mounts are refused (directories only)")
	}
	srv := startRemoteServer(t)
	b := daemon(t)
	p := newProject(t, `
services:
  app:
    image: `+image+`
    init: true
    volumes: ["./one.conf:/etc/one.conf"]
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
`, srv.env()...)
	conf := filepath.Join(p.dir, "one.conf")
	writeFile(t, conf, "one\n")
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	if got := p.must("compose", "exec", "-T", "app", "cat", "/etc/one.conf"); got != "one\n" {
		t.Fatalf("the single file before the swap: %q", got)
	}
	secret := filepath.Join(sharedMount(t), "root-only")
	if err := os.WriteFile(secret, []byte("runtime-host-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(conf); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, conf); err != nil {
		t.Fatal(err)
	}
	// The swap as the runtime's host sees it through the companion's
	// mount (once the kernel's cached entry of the file expires).
	var seen string
	for _, m := range mountedFor(t, p.name) {
		if strings.HasSuffix(m, "/mounts/0") {
			seen = filepath.Join(m, "one.conf")
		}
	}
	if seen == "" {
		t.Fatalf("the companion's mount is not on the runtime's host: %v", mountedFor(t, p.name))
	}
	waitFor(t, 60*time.Second, "the symlink seen at "+seen, func() bool { return isSymlinkInRuntime(t, seen) })
	// Restarted by the client (compose restart), then by the runtime
	// alone (as its restart policy would): each start binds the source
	// again.
	app := appContainer(t, b, p.name)
	grace := 5 * time.Second
	for _, r := range []struct {
		by      string
		restart func() error
	}{
		{"compose restart", func() error {
			if _, errOut, code := p.run("compose", "restart", "app"); code != 0 {
				return errors.New(strings.TrimSpace(errOut))
			}
			return nil
		}},
		{"the runtime", func() error {
			if err := b.Stop(context.Background(), app, backends.StopOptions{Timeout: &grace}); err != nil {
				return err
			}
			return b.Start(context.Background(), app)
		}},
	} {
		if err := r.restart(); err != nil {
			t.Logf("restarted by %s after the swap: %v (a refusal is fine)", r.by, err)
		}
		out, _, _ := p.run("compose", "exec", "-T", "app", "sh", "-c", "cat /etc/one.conf 2>&1; true")
		if strings.Contains(out, "runtime-host-secret") {
			t.Fatalf("restarted by %s: the container read the runtime host's file through the client's symlink: %q", r.by, out)
		}
		t.Logf("restarted by %s after the swap, the container reads %q", r.by, out)
	}
}

// sharedMount is a directory on a mount of its own with shared
// propagation, as every mount is on a systemd host (there, a runtime
// takes an rslave bind of any file).
func sharedMount(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("cornus-e2e", dir, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
		t.Fatal(err)
	}
	return dir
}

// appContainer is the ID of project's one app container (not its
// companion).
func appContainer(t *testing.T, b backends.Backend, project string) string {
	t.Helper()
	cs, err := b.List(context.Background(), backends.ListOptions{All: true, Labels: map[string]string{backends.ComposeProject: project}})
	if err != nil {
		t.Fatal(err)
	}
	var apps []string
	for _, c := range cs {
		if c.Labels["cornus.companion-of"] == "" {
			apps = append(apps, c.ID)
		}
	}
	if len(apps) != 1 {
		t.Fatalf("app containers of %s: %v, want one", project, apps)
	}
	return apps[0]
}

// startSSHAgent runs a real ssh-agent holding one key, commented
// cornus-e2e-key, and returns its socket.
func startSSHAgent(t *testing.T) string {
	t.Helper()
	adir := t.TempDir()
	sock := filepath.Join(adir, "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	sh(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "cornus-e2e-key", "-f", filepath.Join(adir, "id"))
	// The socket file exists from bind(); it answers only after listen().
	waitFor(t, 5*time.Second, "ssh-agent's socket", func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	add := exec.Command("ssh-add", filepath.Join(adir, "id"))
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v\n%s", err, out)
	}
	list := exec.Command("ssh-add", "-l")
	list.Env = add.Env
	if out, err := list.Output(); err != nil || !strings.Contains(string(out), "cornus-e2e-key") {
		t.Fatalf("ssh-add -l on the client: %v %s", err, out)
	}
	return sock
}

// reachThroughCompanion checks that cornus port-forward and cornus
// tunnel reach port of p's service through its companion: want is what
// its HTTP server answers.
func reachThroughCompanion(t *testing.T, p *project, service string, port int, want string) {
	t.Helper()
	local := testnet.FreePort(t)
	fwd := exec.Command(cornusBin, "port-forward", "-p", p.name, service, fmt.Sprintf("%d:%d", local, port))
	var fwdOut strings.Builder
	fwd.Dir, fwd.Env, fwd.Stdout, fwd.Stderr = p.dir, p.env, &fwdOut, &fwdOut
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fwd.Process.Kill()
		_ = fwd.Wait()
		if t.Failed() {
			t.Logf("cornus port-forward said:\n%s", fwdOut.String())
		}
	})
	waitFor(t, 10*time.Second, "port-forward through the companion", func() bool {
		out, _ := exec.Command("curl", "-sf", "--max-time", "3", fmt.Sprintf("http://127.0.0.1:%d/", local)).Output()
		return string(out) == want
	})
	socks := testnet.FreePort(t)
	tun := exec.Command(cornusBin, "tunnel", "-p", p.name, "--listen", fmt.Sprintf("127.0.0.1:%d", socks))
	tun.Dir, tun.Env = p.dir, p.env
	if err := tun.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tun.Process.Kill(); _ = tun.Wait() })
	waitFor(t, 10*time.Second, "tunnel through the companion", func() bool {
		out, _ := exec.Command("curl", "-sf", "--max-time", "3", "--socks5-hostname", fmt.Sprintf("127.0.0.1:%d", socks), fmt.Sprintf("http://%s:%d/", service, port)).Output()
		return string(out) == want
	})
}

// Remote mode's portforward and agent roles: port-forward and tunnel
// reach a port the app serves on its loopback only, through the
// companion's network namespace; exec --forward-agent hands the
// container the caller's ssh-agent (a real ssh-agent here; agentlist
// is `ssh-add -l` for busybox), and the socket goes with the exec. A
// deployment on this machine refuses --forward-agent up front.
func TestRemoteModeForwardAndAgent(t *testing.T) {
	skipBesideTheApp(t, "a port on the app's loopback, a client-local mount")
	if mo, ok := daemon(t).(backends.RemoteMountsOnly); ok && mo.RemoteMountsOnly() {
		t.Skip("this backend's remote mode moves mounts and credentials only: the server dials its workloads itself, as outside remote mode")
	}
	srv := startRemoteServer(t)
	for _, bin := range []string{"ssh-agent", "ssh-add", "ssh-keygen", "curl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is missing (apt-get install openssh-client curl)", bin)
		}
	}
	p := newProject(t, `
services:
  web:
    image: `+image+`
    init: true
    command: ["httpd", "-f", "-p", "127.0.0.1:8080", "-h", "/www"]
    volumes: ["./www:/www:ro", "./tools:/tools:ro"]
  plain:
    image: `+image+`
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`, srv.env()...)
	for _, d := range []string{"www", "tools"} {
		if err := os.Mkdir(filepath.Join(p.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(p.dir, "www", "index.html"), "served on the replica's loopback\n")
	if err := os.WriteFile(filepath.Join(p.dir, "tools", "agentlist"), testTool(t, "agentlist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	// A replica without client-local mounts: its companion (portforward
	// and agent roles) holds no capability at all, SYS_ADMIN least.
	if st := companionProc(t, p, "plain"); st.capEff != 0 || !st.noNewPrivs || !st.roRoot {
		t.Errorf("the companion of a replica without mounts (pid %d): CapEff %#x (want none), no-new-privileges %v, read-only root %v",
			st.pid, st.capEff, st.noNewPrivs, st.roRoot)
	}

	// port-forward and tunnel through the companion.
	reachThroughCompanion(t, p, "web", 8080, "served on the replica's loopback\n")

	sock := startSSHAgent(t)
	p.env = append(p.env, "SSH_AUTH_SOCK="+sock)
	out, errOut, code := p.run("compose", "exec", "-T", "--forward-agent", "web", "sh", "-c", `echo "$SSH_AUTH_SOCK"; /tools/agentlist`)
	if code != 0 || !strings.Contains(out, "ssh-ed25519 cornus-e2e-key") || !strings.HasPrefix(out, "/run/cornus-agent/") {
		t.Errorf("exec --forward-agent: exit %d: %q %s\nserver:\n%s", code, out, errOut, srv.logs.String())
	}
	if out, _, _ := p.run("compose", "exec", "-T", "web", "ls", "/run/cornus-agent"); strings.TrimSpace(out) != "" {
		t.Errorf("the forwarded agent's socket outlived its exec: %q", out)
	}
	if out, _, code := p.run("compose", "exec", "-T", "web", "/tools/agentlist"); code == 0 {
		t.Errorf("an exec without --forward-agent reached an agent: %q", out)
	}
	p.must("compose", "--progress", "quiet", "down")

	// Anywhere else: refused up front, with the reason.
	local := newProject(t, "services:\n  web:\n    image: "+image+"\n", "SSH_AUTH_SOCK="+sock, "CORNUS_SERVER=")
	if _, errOut, code := local.run("compose", "exec", "-T", "--forward-agent", "web", "true"); code == 0 || !strings.Contains(errOut, "remote mode") {
		t.Errorf("--forward-agent on a local deployment: exit %d %s", code, errOut)
	}
}
