package e2e

import (
	"strings"
	"testing"
	"time"
)

const watchRebuildCompose = `services:
  app:
    build: ./app
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
    develop:
      watch:
        - path: ./app
          action: rebuild
`

// TestComposeWatchRebuild: a rebuild rule builds the service again when
// its context changes and replaces its container with one of the new
// image (issue 26 item 2, through the builds issue's builder). On the
// lane's backend, locally and through a server; a backend declaring
// builds a gap refuses the watch's first build, saying why.
func TestComposeWatchRebuild(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, watchRebuildCompose, env...)
		writeFiles(t, p.dir, map[string]string{
			"app/Dockerfile": "FROM " + buildBase(t, b, env) + "\nCOPY msg.txt /msg.txt\n",
			"app/msg.txt":    "one\n",
		})
		t.Cleanup(func() { removeImage(b, p.name+"-app") })
		if why, gap := buildGap(b, env); gap {
			_, errOut, code := p.run("compose", "watch")
			if code == 0 || !strings.Contains(errOut, why) {
				t.Fatalf("declared gap: compose watch exit %d, want a refusal saying %q:\n%s", code, why, errOut)
			}
			return
		}
		_, out, exited := startWatch(t, p)
		deadline := time.Now().Add(3 * time.Minute)
		for !strings.Contains(out.String(), "Watch enabled for app") {
			select {
			case <-exited:
				t.Fatalf("watch ended before it was enabled:\n%s", out.String())
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("watch not enabled within 3 minutes:\n%s", out.String())
			}
		}
		msg := func(want string) func() bool {
			return func() bool {
				got, _, code := p.run("compose", "exec", "-T", "app", "cat", "/msg.txt")
				return code == 0 && strings.TrimSpace(got) == want
			}
		}
		waitFor(t, 10*time.Second, "the first build running", msg("one"))
		before := strings.TrimSpace(p.must("compose", "ps", "-q"))
		start := time.Now()
		writeFiles(t, p.dir, map[string]string{"app/msg.txt": "two\n"})
		waitFor(t, 3*time.Minute, "the rebuilt image running", func() bool {
			if msg("two")() {
				return true
			}
			select {
			case <-exited:
				t.Fatalf("watch ended:\n%s", out.String())
			default:
			}
			return false
		})
		t.Logf("an edit ran in a rebuilt container %v after it was saved", time.Since(start).Round(10*time.Millisecond))
		if after := strings.TrimSpace(p.must("compose", "ps", "-q")); after == before {
			t.Errorf("the container %s was not replaced\n%s", before, out.String())
		}
	})
}
