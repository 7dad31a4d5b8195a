package dockerhost

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down Events: container events filtered by labels, with the exit
// code on die.
func TestEvents(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errc := b.Events(evCtx, backends.EventOptions{Labels: map[string]string{backends.LabelProject: project}})
	c := createApp(t, b, project, spec.App{Name: "once", Command: sh("exit 3")})
	other := createApp(t, b, unique(t, "other"), spec.App{Name: "other", Command: sh("exit 0")})
	for _, id := range []string{c.ID, other.ID} {
		if err := b.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.ID != c.ID || e.Name != c.Name || e.Labels[backends.LabelApp] != "once" || e.Time.IsZero() {
				t.Fatalf("unexpected event %+v", e)
			}
			seen = append(seen, e.Action)
			if e.Action == "die" {
				if e.ExitCode == nil || *e.ExitCode != 3 {
					t.Fatalf("die without exit code 3: %+v", e)
				}
				if strings.Join(seen, ",") != "create,start,die" {
					t.Fatalf("events %v", seen)
				}
				cancel()
				for range events {
				}
				if err := <-errc; err != nil {
					t.Fatalf("error after cancel: %v", err)
				}
				return
			}
		case err := <-errc:
			t.Fatalf("events failed: %v", err)
		case <-timeout:
			t.Fatalf("no die event; saw %v", seen)
		}
	}
}

// Locks down Events' subscription and network options: Subscribed is called
// before any event, an event right after the call is not lost (nothing
// waits for Subscribed here), and with Networks connects and disconnects
// arrive with the container's ID while labels still filter container events.
func TestEventsSubscribedNetworks(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	cleanupNetwork(t, b, map[string]string{backends.LabelProject: project})
	n, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "extra"})
	if err != nil {
		t.Fatal(err)
	}
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	subscribed := make(chan struct{})
	events, errc := b.Events(evCtx, backends.EventOptions{
		Labels: map[string]string{backends.LabelProject: project}, Networks: true,
		Subscribed: func() { close(subscribed) },
	})
	c := createApp(t, b, project, spec.App{Name: "net", Command: sh("sleep 60")})
	createApp(t, b, unique(t, "other"), spec.App{Name: "other", Command: sh("exit 0")})
	// dockerd reports connect only for a running container.
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Connect(ctx, n.Name, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Disconnect(ctx, n.Name, c.ID, false); err != nil {
		t.Fatal(err)
	}
	var seen []string
	timeout := time.After(10 * time.Second)
	const want = "create,connect,start,connect,disconnect" // the default network, then ours
	for strings.Join(seen, ",") != want {
		select {
		case e := <-events:
			select {
			case <-subscribed:
			default:
				t.Fatalf("event %+v before Subscribed", e)
			}
			if e.ID != c.ID {
				if e.Action != "connect" && e.Action != "disconnect" {
					t.Fatalf("container event not filtered by labels: %+v", e)
				}
				continue // network events of containers elsewhere on the daemon
			}
			seen = append(seen, e.Action)
		case err := <-errc:
			t.Fatalf("events failed: %v", err)
		case <-timeout:
			t.Fatalf("saw %v, want %s", seen, want)
		}
	}
}

// Locks down command/entrypoint semantics: nil keeps the image's, an empty
// entrypoint clears it, an empty command clears the image's command while
// keeping its entrypoint.
func TestCommandEntrypoint(t *testing.T) {
	b, ctx := setup(t)
	ref := "cornus-test/busybox-ep:1"
	ensureImage(t, b, testimage.Options{Ref: ref, Entrypoint: []string{"echo", "ep"}, Cmd: []string{"default"}})
	project := unique(t, "proj")
	for _, tc := range []struct {
		name            string
		entrypoint, cmd spec.Command
		want            string
	}{
		{"image defaults", nil, nil, "ep default"},
		{"command only", nil, spec.Command{"mine"}, "ep mine"},
		{"command cleared", nil, spec.Command{}, "ep"},
		{"entrypoint cleared", spec.Command{}, spec.Command{"echo", "plain"}, "plain"},
		{"entrypoint set", spec.Command{"echo"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := createApp(t, b, project, spec.App{Name: "ep", Image: ref, Entrypoint: tc.entrypoint, Command: tc.cmd})
			if err := b.Start(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
			if code, err := b.Wait(ctx, c.ID); err != nil || code != 0 {
				t.Fatalf("wait: %d %v", code, err)
			}
			if out, _ := logsOf(t, b, c.ID); trimmed(out) != tc.want {
				t.Fatalf("output %q, want %q", out, tc.want)
			}
		})
	}
}

// Locks down Attach: stdin reaches the process, its output comes back,
// the stream ends when the container exits.
func TestAttach(t *testing.T) {
	b, ctx := setup(t)
	c := createApp(t, b, unique(t, "proj"), spec.App{Name: "cat", Command: sh("read x; echo got $x; echo oops >&2"), StdinOpen: true})
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	// Stdin stays open: its end would end the attachment (docker attach
	// semantics) before the output arrives.
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = io.WriteString(pw, "hi\n") }() // fails only once the pipe is closed at the end
	var out, errOut bytes.Buffer
	err := b.Attach(ctx, c.ID, backends.AttachOptions{Stdin: pr, Stdout: &out, Stderr: &errOut, Stream: true})
	if err != nil || out.String() != "got hi\n" || errOut.String() != "oops\n" {
		t.Fatalf("attach: %v stdout %q stderr %q", err, out.String(), errOut.String())
	}
}

// Locks down native healthchecks and restart policies: health shows in
// List and Inspect (with its log), on-failure restarts count.
func TestHealthAndRestart(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	retries := 1
	c := createApp(t, b, project, spec.App{
		Name: "healthy", Command: sh("touch /tmp/ok; sleep 60"),
		Healthcheck: &spec.Healthcheck{Test: []string{"CMD-SHELL", "test -f /tmp/ok"}, Interval: spec.DurationOf(200 * time.Millisecond), Retries: &retries},
	})
	r := createApp(t, b, project, spec.App{Name: "crashy", Command: sh("exit 1"), Restart: "on-failure:2"})
	for _, id := range []string{c.ID, r.ID} {
		if err := b.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "healthy in List", func() bool {
		l, err := b.List(ctx, backends.ListOptions{Labels: map[string]string{backends.LabelProject: project, backends.LabelApp: "healthy"}})
		return err == nil && len(l) == 1 && l[0].Health == backends.HealthHealthy
	})
	d, err := b.Inspect(ctx, c.ID)
	if err != nil || d.Health != backends.HealthHealthy || len(d.HealthLog) == 0 || d.Config.Healthcheck == nil || d.Config.Healthcheck.Test[1] != "test -f /tmp/ok" {
		t.Fatalf("inspect health: %v %+v", err, d)
	}
	eventually(t, 15*time.Second, "two restarts", func() bool {
		d, err := b.Inspect(ctx, r.ID)
		return err == nil && d.RestartCount == 2 && d.State == backends.StateExited
	})
	l, err := b.List(ctx, backends.ListOptions{All: true, Labels: map[string]string{backends.LabelProject: project, backends.LabelApp: "crashy"}})
	if err != nil || len(l) != 1 || l[0].ExitCode != 1 || l[0].State != backends.StateExited {
		t.Fatalf("list exited: %v %+v", err, l)
	}
	if d, _ := b.Inspect(ctx, r.ID); d.Config.RestartPolicy != (spec.RestartPolicy{Name: "on-failure", MaxRetries: 2}) || d.ExitCode != 1 {
		t.Fatalf("restart policy %+v exit %d", d.Config.RestartPolicy, d.ExitCode)
	}
}
