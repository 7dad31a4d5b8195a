package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// TestComposeEvents: `compose events --json` (issue 26) follows the
// project's container events as they happen, locally and through a
// server: a start of db shows. A backend without events says so
// by name.
func TestComposeEvents(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, runCompose, env...)
		// Up and stopped: on a server, the project is the tenant's
		// before its events are asked for.
		p.must("compose", "up", "-d", "db")
		p.must("compose", "stop", "-t", "1", "db")
		if refusedWithout(t, b, backends.FeatureEvents, "events", p, "compose", "events", "--json") {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, cornusBin, "compose", "events", "--json", "db")
		cmd.Dir, cmd.Env = p.dir, p.env
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); _ = cmd.Wait() }()
		time.Sleep(time.Second) // the stream is open before the start
		p.must("compose", "start", "db")
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev struct{ Action, Service, Type string }
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("an events line is no JSON object: %q", sc.Text())
			}
			if ev.Service != "db" || ev.Type != "container" {
				t.Fatalf("an event of another service, or no container's: %q", sc.Text())
			}
			if ev.Action == "start" {
				return
			}
		}
		t.Fatalf("no start event of db before the stream ended: %v\n%s", sc.Err(), errb.String())
	})
}
