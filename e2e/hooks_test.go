package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newDevcontainer is a scratch folder holding .devcontainer/devcontainer.json
// (no compose file), deployed under a unique project name.
func newDevcontainer(t *testing.T, config string) *project {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	p := &project{t: t, name: "e2e" + hex.EncodeToString(suffix), dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(p.dir, ".devcontainer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".devcontainer", "devcontainer.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p.env = append(os.Environ(), "COMPOSE_PROJECT_NAME="+p.name)
	t.Cleanup(func() {
		_, _, _ = p.run("compose", "--progress", "quiet", "down", "-v", "-t", "1")
	})
	return p
}

// readEvents reads the lines hooks appended to a file in dir.
func readEvents(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return strings.TrimSpace(string(b))
}

// awaitEvents reads the events file until it holds want: a container's
// main process writes its first line after up has returned.
func awaitEvents(t *testing.T, dir, name, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := readEvents(t, dir, name)
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDevcontainerLifecycleOrder locks down the devcontainer spec's order
// (hardening issue, item 3): onCreate, updateContent, postCreate once
// after the first start, then postStart, then postAttach; a later up of
// the running container runs postAttach only; a restart runs postStart and
// postAttach. The hooks write into the workspace (the bind-mounted folder).
func TestDevcontainerLifecycleOrder(t *testing.T) {
	daemon(t)
	loadImage(t)
	p := newDevcontainer(t, `{
  "image": "cornus-test/busybox:1",
  "onCreateCommand": "echo onCreate >> events",
  "updateContentCommand": ["sh", "-c", "echo updateContent >> events"],
  "postCreateCommand": {"b": "echo postCreate.b >> events", "a": "echo postCreate.a >> events"},
  "postStartCommand": "echo postStart >> events",
  "postAttachCommand": "echo postAttach >> events"
}`)
	p.must("compose", "up", "-d")
	created := "onCreate\nupdateContent\npostCreate.a\npostCreate.b\npostStart\npostAttach"
	if got := readEvents(t, p.dir, "events"); got != created {
		t.Fatalf("first up ran:\n%s\nwant:\n%s", got, created)
	}
	p.must("compose", "up", "-d")
	if got, want := readEvents(t, p.dir, "events"), created+"\npostAttach"; got != want {
		t.Fatalf("up of the running container ran:\n%s\nwant:\n%s", got, want)
	}
	p.must("compose", "stop", "-t", "1")
	p.must("compose", "up", "-d")
	if got, want := readEvents(t, p.dir, "events"), created+"\npostAttach\npostStart\npostAttach"; got != want {
		t.Fatalf("up of the stopped container ran:\n%s\nwant:\n%s", got, want)
	}
}

// TestComposePreStopHook (hardening issue, item 4): a pre_stop hook runs
// in the container while its main process still runs, before the stop
// signal — on stop, on down, and when up recreates the container. The
// hook and the process's TERM trap append to a bind-mounted file, so the
// order there is the order things happened.
func TestComposePreStopHook(t *testing.T) {
	daemon(t)
	loadImage(t)
	p := newProject(t, `
services:
  app:
    image: cornus-test/busybox:1
    volumes: ["./out:/out"]
    environment: {GEN: "${GEN:-1}"}
    command: ["sh", "-c", "trap 'echo term$$GEN >> /out/events; exit 0' TERM; echo start$$GEN >> /out/events; while true; do sleep 0.2; done"]
    pre_stop:
      - command: ["sh", "-c", "ps -o args | grep -q '[t]rap ' && s=up || s=gone; echo prestop:$$s$$GEN >> /out/events"]
`)
	if err := os.Mkdir(filepath.Join(p.dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.must("compose", "up", "-d")
	p.must("compose", "stop", "-t", "5")
	// prestop:up: the app's shell was still running when the hook ran
	// (found by its command line: it is PID 1 on most runtimes, not on
	// incus, where cornus's init is).
	want := "start1\nprestop:up1\nterm1"
	if got := awaitEvents(t, p.dir, "out/events", want); got != want {
		t.Fatalf("after stop:\n%s\nwant:\n%s", got, want)
	}
	p.must("compose", "up", "-d")
	p.env = append(p.env, "GEN=2") // a changed spec: up recreates
	p.must("compose", "up", "-d")
	want += "\nstart1\nprestop:up1\nterm1\nstart2" // the hook runs in the old container
	if got := awaitEvents(t, p.dir, "out/events", want); got != want {
		t.Fatalf("after recreate:\n%s\nwant:\n%s", got, want)
	}
	p.must("compose", "down", "-t", "5")
	want += "\nprestop:up2\nterm2"
	if got := readEvents(t, p.dir, "out/events"); got != want {
		t.Fatalf("after down:\n%s\nwant:\n%s", got, want)
	}
}
