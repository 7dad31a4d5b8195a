package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends/backendtest"
)

const watchCompose = `services:
  app:
    image: cornus-test/busybox:1
    scale: 2
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
    develop:
      watch:
        - path: ./src
          target: /app
          action: sync
          ignore: ["*.tmp"]
          initial_sync: true
        - path: ./conf
          target: /conf
          action: sync+restart
        - path: ./hook
          target: /hook
          action: sync+exec
          exec:
            command: ["sh", "-c", "cat /hook/h.txt > /hook/ran"]
`

// TestComposeWatch: compose watch brings the project up and acts on its
// develop.watch rules: initial_sync copies the tree, an edit and a new
// file reach every replica within a second or two, a deleted file goes,
// an ignored one never comes, sync+restart restarts the service, sync+exec
// runs its command; Ctrl-C ends the watch and the services keep running.
// On the lane's backend, locally and through a server.
func TestComposeWatch(t *testing.T) {
	daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, watchCompose, env...)
		for _, d := range []string{"src/sub", "conf", "hook"} {
			if err := os.MkdirAll(filepath.Join(p.dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(t, filepath.Join(p.dir, "src", "first.txt"), "first\n")
		cmd, out, exited := startWatch(t, p)
		waitFor(t, 90*time.Second, "watch enabled", func() bool { return strings.Contains(out.String(), "Watch enabled for app") })
		in := func(index, cmd string) func() bool {
			return func() bool {
				got, _, code := p.run("compose", "exec", "-T", "--index", index, "app", "sh", "-c", cmd)
				return code == 0 && strings.TrimSpace(got) == "ok"
			}
		}
		for _, i := range []string{"1", "2"} {
			waitFor(t, 5*time.Second, "initial_sync in replica "+i, in(i, `test "$(cat /app/first.txt)" = first && echo ok`))
		}

		start := time.Now()
		writeFile(t, filepath.Join(p.dir, "src", "sub", "new.txt"), "new\n")
		writeFile(t, filepath.Join(p.dir, "src", "first.txt"), "edited\n")
		writeFile(t, filepath.Join(p.dir, "src", "scratch.tmp"), "ignored\n")
		for _, i := range []string{"1", "2"} {
			waitFor(t, 5*time.Second, "the edit in replica "+i, in(i, `test "$(cat /app/sub/new.txt /app/first.txt)" = "$(printf 'new\nedited')" && echo ok`))
		}
		t.Logf("an edit reached both replicas %v after it was saved", time.Since(start).Round(10*time.Millisecond))
		if ok := in("1", `test -e /app/scratch.tmp || echo ok`)(); !ok {
			t.Error("an ignored file was synced")
		}
		if err := os.Remove(filepath.Join(p.dir, "src", "first.txt")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "the deletion", in("2", `test -e /app/first.txt || echo ok`))

		before := p.must("compose", "ps", "--format", "{{.ID}} {{.Status}}")
		writeFile(t, filepath.Join(p.dir, "conf", "c.ini"), "c2\n")
		waitFor(t, 30*time.Second, "sync+restart", func() bool {
			return in("1", `test "$(cat /conf/c.ini)" = c2 && echo ok`)() && strings.Contains(out.String(), `Restarting service "app"`)
		})
		writeFile(t, filepath.Join(p.dir, "hook", "h.txt"), "hooked\n")
		waitFor(t, 10*time.Second, "sync+exec", in("2", `test "$(cat /hook/ran)" = hooked && echo ok`))

		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("watch did not end on Ctrl-C:\n%s", out.String())
		}
		if got := strings.Fields(p.must("compose", "ps", "--format", "{{.Name}}")); len(got) != 2 {
			t.Fatalf("after the watch ended, running: %v (before: %s)\n%s", got, before, out.String())
		}
	})
}

// startWatch starts `cornus compose watch` in p, its output kept in out;
// exited closes when it ends. It is killed when the test ends.
func startWatch(t *testing.T, p *project) (cmd *exec.Cmd, out *backendtest.LockedBuffer, exited <-chan struct{}) {
	t.Helper()
	cmd = exec.Command(cornusBin, "compose", "watch")
	cmd.Dir, cmd.Env = p.dir, p.env
	out = &backendtest.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd, out, done
}
