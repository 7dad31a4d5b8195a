package podman

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// fakeEvents serves GET /libpod/events on a unix socket: the answer to
// the n-th request (from 0) is answers[n]'s lines, then the answer ends,
// or, past the last, stays open until the client goes.
func fakeEvents(t *testing.T, answers [][]string) (*Backend, func() []string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "p.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sinces []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := len(sinces)
		sinces = append(sinces, r.URL.Query().Get("since"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if n >= len(answers) {
			<-r.Context().Done()
			return
		}
		for _, line := range answers[n] {
			fmt.Fprintln(w, line)
		}
	})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("the fake podman: %v", err)
		}
	})
	ep := endpoint{network: "unix", address: sock}
	b := &Backend{cli: newClient(func() endpoint { return ep })}
	return b, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), sinces...)
	}
}

func eventLine(id, action string, at time.Time) string {
	return fmt.Sprintf(`{"Type":"container","Action":%q,"Actor":{"ID":%q,"Attributes":{"name":"app"}},"time":%d,"timeNano":%d}`,
		action, id, at.Unix(), at.UnixNano())
}

// A stream podman ends while the caller still listens is asked for again
// from a little before it ended, and its repeats are skipped (CI71: the
// stream closed cleanly before the destroy a test awaited, and the caller
// read that as the end of the events).
func TestEventsStreamAskedAgain(t *testing.T) {
	now := time.Now()
	create, start := eventLine("c1", "create", now), eventLine("c1", "start", now.Add(time.Millisecond))
	b, sinces := fakeEvents(t, [][]string{
		{create, start},
		{create, start, eventLine("c1", "remove", now.Add(2*time.Millisecond))},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events, errs := b.Events(ctx, backends.EventOptions{})
	var got []string
	for len(got) < 3 {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended after %v: %v", got, <-errs)
			}
			got = append(got, e.Action)
		case <-ctx.Done():
			t.Fatalf("events so far %v; asked %d times", got, len(sinces()))
		}
	}
	if fmt.Sprint(got) != "[create start destroy]" {
		t.Fatalf("events %v, want create, start, destroy once each", got)
	}
	select {
	case e, ok := <-events:
		if ok {
			t.Fatalf("an event more: %+v", e)
		}
	case <-time.After(300 * time.Millisecond):
	}
	asked := sinces()
	if len(asked) != 3 || asked[1] == "" {
		t.Fatalf("requests' since %q: want three, the second from where the first ended", asked)
	}
}

// A podman that ends every answer at once is not asked forever: the
// stream fails, saying so.
func TestEventsStreamEndsAtOnce(t *testing.T) {
	answers := make([][]string, maxQuietEnds+1)
	b, sinces := fakeEvents(t, answers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events, errs := b.Events(ctx, backends.EventOptions{})
	for range events {
		t.Fatal("an event from empty answers")
	}
	err := <-errs
	if err == nil || ctx.Err() != nil {
		t.Fatalf("error %v (context %v), want the stream's failure", err, ctx.Err())
	}
	if n := len(sinces()); n != maxQuietEnds {
		t.Fatalf("asked %d times, want %d", n, maxQuietEnds)
	}
	t.Log(err)
}
