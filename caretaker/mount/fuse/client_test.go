package fuse

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
	"github.com/hugelgupf/p9/p9"
)

// breakingConn is a client's end of a connection that the test breaks:
// once swallow is set, writes report success and send nothing (a request
// that left just before the peer went away); once fail is set, they fail.
// reading reports each read that starts.
type breakingConn struct {
	net.Conn
	swallow, fail atomic.Bool
	reading       chan struct{}
}

func (c *breakingConn) Write(p []byte) (int, error) {
	switch {
	case c.fail.Load():
		return 0, syscall.EPIPE
	case c.swallow.Load():
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *breakingConn) Read(p []byte) (int, error) {
	select {
	case c.reading <- struct{}{}:
	default:
	}
	return c.Conn.Read(p)
}

// Locks down a flake of server's TestSweepMountsAtStart ("9P version:
// wait: socket error: EOF" after 0.00 s): a 9P client whose connection
// died under a request in flight and a failed send must not fail the next
// client of the process (hugelgupf/p9 v0.3.0 pools a response holder that
// a failed send left pending; see sturdyConn).
func TestDeadClientPoisonsNoOther(t *testing.T) {
	// One P: sync.Pool hands the next Get what the last Put left.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 3 {
		deadClient(t, i)
	}
	ec, mc := socketpair(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- export.Serve(ctx, ec, t.TempDir(), export.Options{}) }()
	defer func() {
		cancel()
		mc.Close()
		if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("export: %v", err)
		}
	}()
	c, err := newClient(mc)
	if err != nil {
		t.Fatalf("a healthy client after dead ones: 9P version: %v", err)
	}
	root, err := c.Attach("")
	if err != nil {
		t.Fatalf("a healthy client after dead ones: 9P attach: %v", err)
	}
	if _, _, _, err := root.GetAttr(p9.AttrMaskAll); err != nil {
		t.Fatalf("a healthy client after dead ones: 9P getattr: %v", err)
	}
}

// deadClient makes a client, then kills its connection the way a dying
// peer does: one request waits for its answer, another's send fails, and
// the connection ends.
func deadClient(t *testing.T, i int) {
	t.Helper()
	ec, mc := socketpair(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = export.Serve(ctx, ec, t.TempDir(), export.Options{}); close(served) }()
	defer func() { cancel(); ec.Close(); mc.Close(); <-served }()
	conn := &breakingConn{Conn: mc, reading: make(chan struct{}, 1)}
	c, err := newClient(conn)
	if err != nil {
		t.Fatalf("client %d: 9P version: %v", i, err)
	}
	defer c.Close()
	root, err := c.Attach("")
	if err != nil {
		t.Fatalf("client %d: 9P attach: %v", i, err)
	}
	<-conn.reading // the attach's read
	conn.swallow.Store(true)
	waiting := make(chan error, 1)
	go func() { _, _, _, err := root.GetAttr(p9.AttrMaskAll); waiting <- err }()
	select {
	case <-conn.reading: // its answer is awaited (and never comes)
	case <-time.After(10 * time.Second):
		t.Fatalf("client %d: the first request never read", i)
	}
	conn.fail.Store(true)
	if _, _, _, err := root.GetAttr(p9.AttrMaskAll); err == nil {
		t.Fatalf("client %d: a request on a broken connection succeeded", i)
	}
	mc.Close() // the peer is gone: the waiting request's read fails
	select {
	case err := <-waiting:
		if err == nil {
			t.Fatalf("client %d: the waiting request succeeded on a closed connection", i)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("client %d: the waiting request did not end with its connection", i)
	}
}
