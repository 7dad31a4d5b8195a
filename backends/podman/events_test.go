package podman

import (
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down replays (docker events --since/--until through the proxy,
// docker compose's recreate): podman's history in order, ending at until,
// whether until is past or a moment ahead (podman 4.3 must not be sent it).
func TestEventsReplay(t *testing.T) {
	b, ctx := setup(t)
	project := unique("replay")
	since := time.Now().Add(-time.Second)
	c := started(t, b, project, spec.App{Name: "app", Command: sleeper})
	if err := b.Stop(ctx, c.ID, backends.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx, c.ID, backends.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"create", "start", "die", "destroy"}
	for name, until := range map[string]time.Time{"past": time.Now(), "ahead": time.Now().Add(1500 * time.Millisecond)} {
		t.Run(name, func(t *testing.T) {
			events, errs := b.Events(ctx, backends.EventOptions{Since: since, Until: until, Labels: map[string]string{backends.LabelProject: project}})
			var got []string
			timeout := time.After(20 * time.Second)
			for events != nil {
				select {
				case e, ok := <-events:
					if !ok {
						events = nil
						continue
					}
					if e.ID == c.ID {
						got = append(got, e.Action)
					}
				case <-timeout:
					t.Fatalf("the replay did not end at until; so far %v", got)
				}
			}
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			if !inOrder(got, want) || time.Now().Before(until) {
				t.Fatalf("replay %v (ended %v before until), want %v in order", got, time.Until(until), want)
			}
		})
	}
}
