package podman

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// syncBuffer is a buffer written by one goroutine and read by another.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Locks down a flake of the podman lane through the proxy: `docker compose
// run --rm app echo from-run` (StdinOnce, its stdin empty) printed nothing
// when the container's output came more than 200 ms after stdin ended: the
// attachment ended with stdin. As with Docker, a StdinOnce container's
// output streams on to its end.
func TestAttachStdinOnceKeepsOutput(t *testing.T) {
	b, ctx := setup(t)
	c := createApp(t, b, unique("stdinonce"), spec.App{Name: "app", StdinOpen: true, Command: spec.Command{"sh", "-c", "sleep 1; echo late"}},
		func(in *backends.ResolveInput) { in.StdinOnce = true })
	var out syncBuffer
	attached := make(chan struct{})
	done := make(chan error, 1)
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	go func() {
		done <- b.Attach(actx, c.ID, backends.AttachOptions{Stream: true, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
			Attached: func() { close(attached) }})
	}()
	select {
	case <-attached:
	case err := <-done:
		t.Fatalf("attach: %v", err)
	}
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("attach: %v", err)
	}
	if got := out.String(); got != "late\n" {
		t.Fatalf("output of a StdinOnce container after its empty stdin: %q, want %q", got, "late\n")
	}
}
