package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// 50 sessions at once for 20 s, each asking ps and fetching a page from
// a workload through its session, with no error; afterwards no goroutine
// or file descriptor is left over.
func TestConcurrentSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("20 s load test")
	}
	const sessions, duration = 50, 20 * time.Second
	ts := newTestServer(t)
	p := uniqueProject("load")
	ts.upAs(ts.alice, spec.Project{Name: p, Services: map[string]spec.App{"web": {
		Image: testImage, Command: []string{"sh", "-c", "mkdir -p /w && echo served > /w/index.html && exec httpd -f -p 8080 -h /w"},
	}}}.Normalize())
	c, err := client.New(ts.http.URL, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	projects := &client.Projects{Client: c}
	settle := func() (int, int) {
		time.Sleep(500 * time.Millisecond)
		http.DefaultClient.CloseIdleConnections()
		ts.http.CloseClientConnections()
		time.Sleep(500 * time.Millisecond)
		return runtime.NumGoroutine(), openFDs(t)
	}
	g0, fd0 := settle()
	var ops, errs atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		errs.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	for range sessions {
		wg.Go(func() {
			sess, err := c.OpenSession(context.Background(), p, true)
			if err != nil {
				fail(err)
				return
			}
			defer sess.Close()
			for ctx.Err() == nil {
				if _, err := projects.PS(context.Background(), p, engineAll()); err != nil {
					fail(err)
					return
				}
				if err := fetch(sess, ops.Load()%2 == 1); err != nil {
					fail(err)
					return
				}
				ops.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if n := errs.Load(); n > 0 {
		t.Fatalf("%d errors in %d operations; first: %v", n, ops.Load(), firstErr.Load())
	}
	g1, fd1 := settle()
	t.Logf("%d sessions × %v: %d round trips (ps + a page through the session), 0 errors; goroutines %d → %d, fds %d → %d",
		sessions, duration, ops.Load(), g0, g1, fd0, fd1)
	if g1 > g0+5 || fd1 > fd0+5 {
		t.Fatalf("leak: goroutines %d → %d, fds %d → %d", g0, g1, fd0, fd1)
	}
}

// fetch gets a page through the session, the stream opened early
// (port-forward's way) or its answer awaited.
func fetch(sess *client.Session, early bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := sess.Dial
	if early {
		dial = sess.DialEarly
	}
	conn, err := dial(ctx, api.Dial{Service: "web", Port: 8080})
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprint(conn, "GET / HTTP/1.0\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	if !strings.Contains(b.String(), "served") {
		return fmt.Errorf("page %q", b.String())
	}
	return nil
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}
