package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/caretaker/mount"
)

// localMountsServed reports whether the server's backend takes
// client-local mounts (dockerhost, bare, incus: runtimes on the server's
// host); on any other backend the up must be
// refused up front with nothing created, which it asserts (the test then
// ends, passed).
func localMountsServed(t *testing.T, p *project) bool {
	t.Helper()
	switch sel := fromenv.Selected(os.Environ()); sel {
	case "dockerhost", "bare", "incus":
		return true
	default:
		_, errOut, code := p.run("compose", "--progress", "plain", "up")
		want := "not supported by the " + sel + " backend"
		if sel == "containerd" {
			want = "CORNUS_CONTAINERD_REMOTE=1"
		}
		if code == 0 || !strings.Contains(errOut, want) {
			t.Fatalf("client-local mounts on %s: exit %d, want a refusal naming %q:\n%s", sel, code, want, errOut)
		}
		if c, _, _ := leftovers(t, daemon(t), p.name); c != 0 {
			t.Fatalf("the refused up created %d containers", c)
		}
		t.Logf("%s refuses client-local mounts up front, as it must: %s", sel, strings.TrimSpace(errOut))
		return false
	}
}

// mountsDir is where the e2e servers mount client-local mounts.
func mountsDir() string { return filepath.Join(os.Getenv("CORNUS_DATA_DIR"), "mounts") }

// Issue 12 through the CLI: Compose bind mounts of the client's files
// become client-local mounts (and the output says so); a container's
// write lands on the client, the client's edit reaches the container, :ro
// refuses writes, escapes fail, a client's set-user-ID program gains
// nothing, down leaves nothing mounted.
func TestServerLocalMounts(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	srv := startServer(t, t.TempDir())
	p := newProject(t, `
services:
  app:
    image: `+image+`
    init: true
    volumes: ["./src:/work", "./cfg:/cfg:ro", "./one.conf:/etc/one.conf"]
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
`, srv.env()...)
	for _, d := range []string{"src", "cfg"} {
		if err := os.Mkdir(filepath.Join(p.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(p.dir, "src", "seed"), "v1\n")
	writeFile(t, filepath.Join(p.dir, "cfg", "app.ini"), "ro\n")
	writeFile(t, filepath.Join(p.dir, "one.conf"), "one\n")
	writeFile(t, filepath.Join(p.dir, "outside"), "secret-outside\n")
	euid := filepath.Join(p.dir, "src", "euid")
	if err := os.WriteFile(euid, testTool(t, "euid"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(euid, 0o755|os.ModeSetuid); err != nil { // the test runs as root: the file is root's
		t.Fatal(err)
	}
	if !localMountsServed(t, p) {
		return
	}
	_, errOut, code := p.run("compose", "--progress", "plain", "up", "-d")
	if code != 0 {
		t.Fatalf("up: %s", errOut)
	}
	if strings.Count(errOut, "is a client-local mount") != 3 {
		t.Errorf("up does not say the binds became client-local mounts:\n%s", errOut)
	}
	if got := p.must("compose", "exec", "-T", "app", "sh", "-c", "echo from-container > /work/out && cat /work/seed /etc/one.conf"); got != "v1\none\n" {
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
	// A set-user-ID root program the client planted runs as the
	// container's user: the server's mounts are nosuid (binds keep it).
	if uid := p.must("compose", "exec", "-T", "--user", "1000", "app", "/work/euid"); uid != "1000\n" {
		t.Errorf("a set-user-ID root program from the client ran with effective uid %q in the container, want 1000", uid)
	}
	escape := "ln -s " + filepath.Join(p.dir, "outside") + " /work/abs; ln -s ../outside /work/rel; " +
		"cat /work/abs /work/rel /work/../outside 2>&1; ln /etc/hostname /work/hard 2>&1; true"
	if out, _, _ := p.run("compose", "exec", "-T", "app", "sh", "-c", escape); strings.Contains(out, "secret-outside") {
		t.Errorf("an escape read the client's file outside the export:\n%s", out)
	}
	p.must("compose", "--progress", "quiet", "down")
	if m, _ := mount.Mounted(mountsDir()); len(m) != 0 {
		t.Errorf("still mounted after down: %v", m)
	}
	if c, _, _ := leftovers(t, b, p.name); c != 0 {
		t.Errorf("%d containers after down", c)
	}
}

// Fault drill (issue 12): kill -9 the client of `cornus deploy
// --local-mount` while its container writes through the mount: the
// server removes the containers, then unmounts; nothing stays mounted and
// the server keeps serving.
func TestServerLocalMountKilledClient(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	srv := startServer(t, t.TempDir())
	p := newProject(t, "services:\n  app:\n    image: "+image+"\n    volumes: [\"./w:/work\"]\n", srv.env()...)
	if err := os.Mkdir(filepath.Join(p.dir, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !localMountsServed(t, p) {
		return
	}
	writeFile(t, filepath.Join(p.dir, "deploy.yaml"), "name: "+p.name+"\nservices:\n  app:\n    image: "+image+
		"\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do dd if=/dev/zero bs=64k count=16 2>/dev/null >> /work/log; done\"]\n")
	before, _ := mount.Mounted(mountsDir())
	cmd := exec.Command(cornusBin, "deploy", "--progress", "quiet", "-f", "deploy.yaml", "--local-mount", "./w:/work")
	cmd.Dir, cmd.Env = p.dir, p.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	log := filepath.Join(p.dir, "w", "log")
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for st, err := os.Stat(log); err != nil || st.Size() <= 4<<20; st, err = os.Stat(log) {
		select {
		case <-exited:
			t.Fatalf("deploy --local-mount exited before the drill:\n%s", errb.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited // errb is complete
			t.Fatalf("the container did not write through the mount within 60 s:\n%s", errb.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	start := time.Now()
	waitFor(t, 15*time.Second, "containers removed and the mount gone after kill -9", func() bool {
		c, _, _ := leftovers(t, b, p.name)
		m, _ := mount.Mounted(mountsDir())
		return c == 0 && len(m) == len(before)
	})
	t.Logf("kill -9 mid-write: containers removed and unmounted %v after the client died (%d MiB written)",
		time.Since(start).Round(10*time.Millisecond), fileSize(log)>>20)
	// The server still serves, mounts included.
	if out, errOut, code := p.run("deploy", "--progress", "quiet", "-f", "deploy.yaml", "--local-mount", "./w:/work", "--detach"); code == 0 ||
		!strings.Contains(errOut, "cannot go with --detach") {
		t.Errorf("--local-mount with --detach: exit %d %s%s", code, out, errOut)
	}
	if _, errOut, code := p.run("compose", "ps"); code != 0 {
		t.Errorf("the server after the drill: %s", errOut)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
