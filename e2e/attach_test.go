package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

const attachCompose = `services:
  echo:
    image: cornus-test/busybox:1
    stdin_open: true
    command: ["sh", "-c", "while read l; do echo got:$$l; done; sleep 3600"]
`

// TestComposeAttach: `compose attach` (issue 26) carries stdin to a
// service's container and its output back, until the detach keys
// (ctrl-p ctrl-q), which leave it running; locally and through a server.
// A backend without attach says so by name.
func TestComposeAttach(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, attachCompose, env...)
		p.must("compose", "up", "-d", "--wait")
		if refusedWithout(t, b, backends.FeatureAttach, "attach", p, "compose", "attach", "echo") {
			return
		}
		out, errOut, code := p.runIn(typed(t, "hello\n", "\x10\x11", 2*time.Second), "compose", "attach", "echo")
		if code != 0 || !strings.Contains(out, "got:hello") {
			t.Fatalf("attach: exit %d, stdout %q, want got:hello and a detach\n%s", code, out, errOut)
		}
		if st := strings.TrimSpace(p.must("compose", "ps", "--format", "{{.State}}", "echo")); st != "running" {
			t.Fatalf("after a detach the container is %s", st)
		}
	})
}

// typed is a pipe that carries line, then, after pause (the answer
// comes back meanwhile), the rest; it ends a while later.
func typed(t *testing.T, line, rest string, pause time.Duration) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		defer w.Close()
		_, _ = w.WriteString(line)
		time.Sleep(pause)
		_, _ = w.WriteString(rest)
		time.Sleep(30 * time.Second)
	}()
	return r
}
