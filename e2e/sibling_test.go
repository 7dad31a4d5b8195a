package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// agentlistRef is the busybox test image with /bin/agentlist (`ssh-add
// -l` for busybox, e2e/agentlist).
const agentlistRef = "cornus-test/agentlist:1"

// Issue 30, item 3: remote mode on incus (CORNUS_INCUS_REMOTE=1), where
// an instance cannot join another's network namespace: each replica's
// caretaker is an instance beside it, on its networks, sharing a custom
// volume with it. Port-forward and tunnel reach the app by the address
// the server names, exec --forward-agent hands it the caller's agent
// through the shared volume; a client-local mount or a credential is
// refused before anything is made, saying why; down leaves nothing.
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

	// What needs the app's namespaces: refused, nothing made.
	for _, c := range []struct{ extra, says string }{
		{`volumes: ["./src:/src"]`, "client-local mount at /src"},
		{"x-cornus-credentials: [{name: tok, source: {env: TOK}}]", "services.app.credentials"},
	} {
		q := newProject(t, "services:\n  app:\n    image: "+image+"\n    "+c.extra+"\n", append(srv.env(), "TOK=x")...)
		if err := os.MkdirAll(filepath.Join(q.dir, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := q.run("compose", "--progress", "plain", "up", "-d")
		if code == 0 || !strings.Contains(errOut, c.says) || !strings.Contains(errOut, "beside the app") {
			t.Errorf("%s: exit %d, %s", c.extra, code, errOut)
		}
		if cs, ns, vs := leftovers(t, b, q.name); cs != 0 || ns != 0 || vs != 0 {
			t.Errorf("%s refused: %d containers, %d networks, %d volumes left", c.extra, cs, ns, vs)
		}
	}
}
