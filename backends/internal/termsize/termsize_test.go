package termsize

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// Set retries a size the process could not take yet; Follow passes every
// change on and ends when its channel closes.
func TestSetAndFollow(t *testing.T) {
	var got []backends.TermSize
	fails := 3
	resize := func(s backends.TermSize) error {
		got = append(got, s)
		if fails > 0 {
			fails--
			return errors.New("no tty yet")
		}
		return nil
	}
	set(context.Background(), resize, backends.TermSize{Width: 80, Height: 24})
	if len(got) != 4 {
		t.Fatalf("set tried %d times, want 4 (three failures, then the size)", len(got))
	}
	got = nil
	ch := make(chan backends.TermSize, 2)
	ch <- backends.TermSize{Width: 100, Height: 30}
	ch <- backends.TermSize{Width: 120, Height: 40}
	close(ch)
	Follow(make(chan struct{}), ch, resize)
	if len(got) != 2 || got[1].Width != 120 {
		t.Fatalf("Follow passed %v", got)
	}
}

// TestTrack: the first size is set before Track returns, changes follow
// until stop, and none after it.
func TestTrack(t *testing.T) {
	got := make(chan backends.TermSize, 4)
	resize := func(s backends.TermSize) error { got <- s; return nil }
	changes := make(chan backends.TermSize)
	stop := Track(context.Background(), resize, &backends.TermSize{Width: 80, Height: 24}, changes)
	if s := <-got; s.Width != 80 {
		t.Fatalf("first size %v, want 80x24", s)
	}
	changes <- backends.TermSize{Width: 100, Height: 30}
	if s := <-got; s.Width != 100 {
		t.Fatalf("change %v, want 100x30", s)
	}
	stop()
	select {
	case changes <- backends.TermSize{Width: 1, Height: 1}:
		t.Fatal("a change was taken after stop")
	case <-time.After(50 * time.Millisecond):
	}
}
