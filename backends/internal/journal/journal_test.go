package journal

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// History is replayed from since, live events follow, and until ends the
// stream.
func TestFollowHistoryThenLive(t *testing.T) {
	j := Open(t.TempDir())
	t0 := time.Now().Add(-time.Second)
	for i, a := range []string{"create", "start"} {
		if err := j.Append(Event{Time: t0.Add(time.Duration(i) * time.Millisecond), Action: a, ID: "c1"}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []string
	ready := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- j.Follow(ctx, t0.Add(time.Millisecond), time.Time{}, func() { close(ready) }, func(e Event) bool {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, e.Action)
			return e.Action != "die"
		})
	}()
	<-ready
	if err := j.Append(Event{Action: "die", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(got, ","); s != "start,die" {
		t.Fatalf("events %s", s)
	}
}

// The journal stays bounded and a follower sees every event across a
// rotation.
func TestRotation(t *testing.T) {
	j := Open(t.TempDir())
	big := strings.Repeat("x", 8<<10)
	n := int(MaxBytes/(8<<10)) + 50
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	count := 0
	ready := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- j.Follow(ctx, time.Time{}, time.Time{}, func() { close(ready) }, func(e Event) bool {
			count++
			return e.Action != "last"
		})
	}()
	<-ready
	for i := range n {
		if err := j.Append(Event{Action: "a", ID: fmt.Sprint(i), Labels: map[string]string{"pad": big}}); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			time.Sleep(2 * pollEvery) // let the follower keep up, as a reader would
		}
	}
	if err := j.Append(Event{Action: "last"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if count < 200 {
		t.Fatalf("follower saw %d of %d events", count, n+1)
	}
}
