package bare

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// Locks down a flake of docker compose run --rm through the proxy on
// bare: an attachment with stdin taken before the start (as docker run
// and compose run do) gets all the output of a process that writes and
// exits at once; it used to lose what came between its replay of the
// log and the monitor taking the attachment.
func TestAttachBeforeStartKeepsOutput(t *testing.T) {
	b, _ := drillBackend(t)
	for i := range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		c, err := b.Create(ctx, backends.ContainerSpec{Name: fmt.Sprintf("attach-early-%d", i), Image: drillImage,
			Command: []string{"echo", "from-run"}, StdinOpen: true, StdinOnce: true})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		var mu sync.Mutex
		attached := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- b.Attach(ctx, c.ID, backends.AttachOptions{Stream: true, Stdin: strings.NewReader(""),
				Stdout: &lockedBuffer{mu: &mu, b: &out}, Attached: func() { close(attached) }})
		}()
		<-attached
		if err := b.Start(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("run %d: attach: %v", i, err)
		}
		mu.Lock()
		got := out.String()
		mu.Unlock()
		_ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true})
		cancel()
		if got != "from-run\n" {
			t.Fatalf("run %d: the attachment saw %q, want the process's whole output", i, got)
		}
	}
}

// lockedBuffer writes to b under mu, which the test reads it under.
type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
