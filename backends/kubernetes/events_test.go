package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// TestEventsReplayPastUntil locks down `docker events --since --until`
// through the proxy (issue 10): a window that ended before the call is
// replayed whole. The history listing once ran under a deadline of
// until+1s, so a window ending more than a second ago (or a listing of a
// busy namespace's Events taking longer) returned nothing.
func TestEventsReplayPastUntil(t *testing.T) {
	b := newTestBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	project := fmt.Sprintf("evreplay%d", time.Now().UnixNano()%1e6)
	since := time.Now().Add(-time.Second)
	c, err := b.Create(ctx, backends.ContainerSpec{
		Project: project, App: "app", Replica: 1, Name: project + "-app-1",
		Labels: map[string]string{backends.LabelProject: project},
		Image:  "cornus-test/busybox:1", Command: []string{"sleep", "300"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true}) })
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	grace := time.Second
	if err := b.Stop(ctx, c.ID, backends.StopOptions{Timeout: &grace}); err != nil {
		t.Fatal(err)
	}
	until := time.Now()
	time.Sleep(1500 * time.Millisecond) // the window ended well before the call
	events, errs := b.Events(ctx, backends.EventOptions{Since: since, Until: until, Labels: map[string]string{backends.LabelProject: project}})
	var got []string
	for e := range events {
		if e.ID == c.ID {
			got = append(got, e.Action)
		}
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"create", "start", "die"} {
		if !slices.Contains(got, want) {
			t.Errorf("replay %v lacks %q", got, want)
		}
	}
}
