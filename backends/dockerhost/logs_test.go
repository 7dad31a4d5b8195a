package dockerhost

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down log options (tail, follow to the end, timestamps, since) and
// raw logs of a TTY container.
func TestLogsOptions(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	c := createApp(t, b, project, spec.App{Name: "log", Command: sh("echo a; echo b; sleep 0.5; echo c >&2")})
	tty := createApp(t, b, project, spec.App{Name: "tty", Command: sh("echo tty"), TTY: true})
	begin := time.Now()
	for _, id := range []string{c.ID, tty.ID} {
		if err := b.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := b.Logs(ctx, c.ID, backends.LogOptions{Follow: true, Tail: -1, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "a\nb\nc\n" {
		t.Fatalf("follow, stderr merged: %q", out.String())
	}
	if time.Since(begin) < 400*time.Millisecond {
		t.Fatal("follow returned before the container ended")
	}
	out.Reset()
	if err := b.Logs(ctx, c.ID, backends.LogOptions{Tail: 1, Timestamps: true, Stdout: &out, Stderr: &out}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+ c\n$`).MatchString(out.String()) {
		t.Fatalf("tail 1 with timestamps: %q", out.String())
	}
	out.Reset()
	if err := b.Logs(ctx, c.ID, backends.LogOptions{Tail: -1, Since: time.Now().Add(time.Hour), Stdout: &out}); err != nil || out.Len() != 0 {
		t.Fatalf("since the future: %v %q", err, out.String())
	}
	if _, err := b.Wait(ctx, tty.ID); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := b.Logs(ctx, tty.ID, backends.LogOptions{Tail: -1, Stdout: &out}); err != nil || out.String() != "tty\r\n" {
		t.Fatalf("tty logs: %v %q", err, out.String())
	}
}

// Locks down bind mounts with createHostPath (legacy Binds at API 1.41):
// the missing host directory is created and shared.
func TestBindMount(t *testing.T) {
	b, ctx := setup(t)
	dir := filepath.Join(t.TempDir(), "created")
	c := createApp(t, b, unique(t, "proj"), spec.App{
		Name: "bind", Command: sh("echo hi > /host/f"),
		Mounts: []spec.Mount{{Source: dir, Target: "/host", CreateHostPath: true}, {Source: "/etc", Target: "/hostetc", ReadOnly: true}},
	})
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if code, err := b.Wait(ctx, c.ID); err != nil || code != 0 {
		t.Fatalf("wait: %d %v", code, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(data) != "hi\n" {
		t.Fatalf("host file: %v %q", err, data)
	}
	d, _ := b.Inspect(ctx, c.ID)
	var ro bool
	for _, m := range d.Mounts {
		ro = ro || (m.Type == "bind" && m.Destination == "/hostetc" && m.ReadOnly)
	}
	if !ro {
		t.Fatalf("mounts: %+v", d.Mounts)
	}
}
