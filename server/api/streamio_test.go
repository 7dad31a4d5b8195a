package api

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/containerd/errdefs"
)

// TestEarlyBytes sends bytes behind a header before any answer: the
// reader of the header gets them (ReadHeader keeps what it buffered), and
// the opener reads the answer first, then what follows it, or the refusal.
func TestEarlyBytes(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		opener, peer := net.Pipe()
		done := make(chan error, 1)
		go func() {
			defer peer.Close()
			h, st, err := ReadHeader(peer)
			if err != nil {
				done <- err
				return
			}
			early := make([]byte, 5)
			if _, err := io.ReadFull(st, early); err != nil || string(early) != "early" || h.Op != OpEgress {
				done <- errors.Join(errors.New("the bytes behind the header: "+string(early)), err)
				return
			}
			if refuse {
				Reply(st, errdefs.ErrPermissionDenied)
				done <- nil
				return
			}
			Reply(st, nil)
			_, err = io.WriteString(st, "late")
			done <- err
		}()
		c, err := OpenEarly(opener, StreamHeader{Op: OpEgress}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// net.Pipe has no buffer: this write returns once the peer read
		// it, before any answer was sent.
		if _, err := io.WriteString(c, "early"); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(c)
		if perr := <-done; perr != nil {
			t.Fatal(perr)
		}
		switch {
		case refuse && (!errdefs.IsPermissionDenied(err) || !errdefs.IsPermissionDenied(Answer(c))):
			t.Fatalf("refused: read %q, %v; Answer %v", b, err, Answer(c))
		case !refuse && (err != nil || string(b) != "late" || Answer(c) != nil):
			t.Fatalf("answered: read %q, %v", b, err)
		}
		c.Close()
	}
}

// TestEarlyDeadline: the caller's read deadline bounds the wait for an
// early stream's answer (the stream's own wait here is an hour).
func TestEarlyDeadline(t *testing.T) {
	opener, peer := net.Pipe()
	defer peer.Close()
	go func() { _, _ = io.Copy(io.Discard, peer) }() // reads, never answers
	c, err := OpenEarly(opener, StreamHeader{Op: OpDial}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read: %v, want the deadline exceeded", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the read waited past the caller's deadline")
	}
}

// The readers of header lines are reused (issue 29): what one stream
// buffered behind its header stays that stream's once its reader reads
// another stream's header.
func TestHeaderReaderReused(t *testing.T) {
	open := func(early string) net.Conn {
		opener, peer := net.Pipe()
		t.Cleanup(func() { opener.Close(); peer.Close() })
		go func() { _, _ = opener.Write(append(HeaderLine(StreamHeader{Op: OpEgress}), early...)) }()
		_, st, err := ReadHeader(peer)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	var streams []net.Conn
	for _, early := range []string{"first", "other"} {
		streams = append(streams, open(early))
	}
	for i, want := range []string{"first", "other"} {
		if got := string(TakeEarly(streams[i])); got != want {
			t.Fatalf("stream %d: %q behind its header, want %q", i, got, want)
		}
	}
}
