package e2e

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

const anonCompose = `services:
  app:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
    environment: [ROUND]
    volumes: [/data]
`

// TestUpAnonymousVolumes: a recreated container keeps its anonymous
// volume's data (docker compose's default), up -V starts it afresh. A
// backend that cannot hand volumes over renews them always. Locally and
// through a server; on dockerd, docker compose beside it does the same.
func TestUpAnonymousVolumes(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	keeps := b.Capabilities().Has(backends.FeatureInherit)
	// rounds runs up three times (a changed ROUND recreates the
	// container) and says what /data/f held after each.
	rounds := func(t *testing.T, up func(args ...string), read func() string) []string {
		t.Helper()
		up("ROUND=1")
		saw := []string{read()}
		up("ROUND=2")
		saw = append(saw, read())
		up("ROUND=3", "-V")
		return append(saw, read())
	}
	want := []string{"kept", "kept", ""}
	if !keeps {
		want = []string{"kept", "", ""}
	}
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, anonCompose, env...)
		first := true
		got := rounds(t, func(args ...string) {
			p.env = append(p.env, args[0])
			up := append([]string{"compose", "--progress", "quiet", "up", "-d"}, args[1:]...)
			p.must(up...)
			if first {
				p.must("compose", "exec", "-T", "app", "sh", "-c", "echo kept > /data/f")
				first = false
			}
		}, func() string {
			out, _, _ := p.run("compose", "exec", "-T", "app", "sh", "-c", "cat /data/f 2>/dev/null")
			return strings.TrimSpace(out)
		})
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("/data/f after up, a recreating up, up -V: %q, want %q", got, want)
		}
		if len(env) > 0 || b.Name() != "dockerhost" {
			return
		}
		dc := composeBinary(t)
		d := newProject(t, anonCompose)
		t.Cleanup(func() { _ = exec.Command(dc, "-p", d.name, "down", "-v", "-t", "1").Run() })
		first = true
		theirs := rounds(t, func(args ...string) {
			d.env = append(d.env, args[0])
			if out, code := runDockerCompose(t, dc, d, append([]string{"--progress", "quiet", "up", "-d"}, args[1:]...)...); code != 0 {
				t.Fatalf("docker compose up: exit %d\n%s", code, out)
			}
			if first {
				d.must("compose", "exec", "-T", "app", "sh", "-c", "echo kept > /data/f")
				first = false
			}
		}, func() string {
			out, _, _ := d.run("compose", "exec", "-T", "app", "sh", "-c", "cat /data/f 2>/dev/null")
			return strings.TrimSpace(out)
		})
		if !slices.Equal(theirs, got) {
			t.Errorf("docker compose: /data/f %q, cornus %q", theirs, got)
		}
	})
}
