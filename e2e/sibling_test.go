package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker/mount"
)

// agentlistRef is the busybox test image with /bin/agentlist (`ssh-add
// -l` for busybox, e2e/agentlist).
const agentlistRef = "cornus-test/agentlist:1"

// Issue 30, item 3: remote mode on incus (CORNUS_INCUS_REMOTE=1), where
// an instance cannot join another's network namespace: each replica's
// caretaker is an instance beside it, on its networks, sharing a custom
// volume with it. Port-forward and tunnel reach the app by the address
// the server names, exec --forward-agent hands it the caller's agent
// through the shared volume; a client-local mount is the server's, bound
// from its host as without remote mode; down leaves nothing.
// (Credentials beside the app: TestRemoteModeCredentials.)
func TestRemoteModeBesideTheApp(t *testing.T) {
	if sc, ok := daemon(t).(backends.SiblingCompanions); !ok || !sc.SiblingCompanions() {
		t.Skipf("the %s backend's companions share their app's network namespace: TestRemoteModeForwardAndAgent", daemon(t).Name())
	}
	srv := startRemoteServer(t)
	b := daemon(t)
	loadTestImage(t, agentlistRef, map[string]string{"bin/agentlist": string(testTool(t, "agentlist"))})
	p := newProject(t, `
services:
  web:
    image: `+agentlistRef+`
    init: true
    command: ["sh", "-c", "mkdir -p /www && echo served beside the companion > /www/index.html && exec httpd -f -p 8080 -h /www"]
`, srv.env()...)
	if _, errOut, code := p.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	reachThroughCompanion(t, p, "web", 8080, "served beside the companion\n")
	sock := startSSHAgent(t)
	p.env = append(p.env, "SSH_AUTH_SOCK="+sock)
	out, errOut, code := p.run("compose", "exec", "-T", "--forward-agent", "web", "sh", "-c", `echo "$SSH_AUTH_SOCK"; agentlist`)
	if code != 0 || !strings.Contains(out, "ssh-ed25519 cornus-e2e-key") || !strings.HasPrefix(out, "/run/cornus-agent/") {
		t.Errorf("exec --forward-agent: exit %d: %q %s\nserver:\n%s", code, out, errOut, srv.logs.String())
	}
	p.must("compose", "--progress", "quiet", "down")
	if c, _, v := leftovers(t, b, p.name); c != 0 || v != 0 {
		t.Errorf("%d containers, %d volumes after down", c, v)
	}

	// A client-local mount: the server mounts it on its host, incusd's,
	// and the app binds it, as without remote mode.
	q := newProject(t, "services:\n  app:\n    image: "+image+"\n    init: true\n    volumes: [\"./src:/src\"]\n"+
		"    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 0.2; done\"]\n", srv.env()...)
	if err := os.MkdirAll(filepath.Join(q.dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(q.dir, "src", "seed"), "from the client\n")
	if _, errOut, code := q.run("compose", "--progress", "plain", "up", "-d"); code != 0 {
		t.Fatalf("up with a client-local mount: %s\nserver:\n%s", errOut, srv.logs.String())
	}
	if got := q.must("compose", "exec", "-T", "app", "sh", "-c", "echo from-the-app > /src/out && cat /src/seed"); got != "from the client\n" {
		t.Errorf("read through the mount: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(q.dir, "src", "out")); err != nil || string(b) != "from-the-app\n" {
		t.Errorf("the app's write on the client: %q %v", b, err)
	}
	q.must("compose", "--progress", "quiet", "down")
	if m, err := mount.Mounted(mountsDir()); err != nil || len(m) != 0 {
		t.Errorf("still mounted after down: %v %v", m, err)
	}
	if cs, _, vs := leftovers(t, b, q.name); cs != 0 || vs != 0 {
		t.Errorf("after the mount's down: %d containers, %d volumes", cs, vs)
	}
}
