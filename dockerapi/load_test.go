package dockerapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoad: 50 concurrent docker-ps/inspect clients for 30 s get zero
// errors, and the server holds no more goroutines or file descriptors
// afterwards than before (issue #4). CORNUS_LOAD_SECONDS shortens it for
// local runs.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test skipped in -short mode")
	}
	ts := newTestServer(t)
	var ids []string
	for i := range 3 {
		id := ts.create(fmt.Sprintf("%s-load%d", ts.label, i), "")
		if status, body, _ := ts.do("POST", "/containers/"+id+"/start", ""); status != 204 {
			t.Fatalf("start: %d %s", status, body)
		}
		ids = append(ids, id)
	}
	duration := 30 * time.Second
	if v, err := strconv.Atoi(os.Getenv("CORNUS_LOAD_SECONDS")); err == nil && v > 0 {
		duration = time.Duration(v) * time.Second
	}
	sock := ts.client.Transport.(*http.Transport)
	dial := sock.DialContext
	ts.do("GET", "/containers/json", "") // warm the backend's connections
	settle()
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	var requests, failures atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	transports := make([]*http.Transport, 50)
	for w := range 50 {
		tr := &http.Transport{DialContext: dial}
		transports[w] = tr
		client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				path := "/v1.47/containers/json?all=1"
				if (w+i)%2 == 1 {
					path = "/v1.47/containers/" + ids[(w+i)%len(ids)] + "/json"
				}
				req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://cornus"+path, nil)
				resp, err := client.Do(req)
				requests.Add(1)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("%s: status %d", path, resp.StatusCode)
					}
				}
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	for _, tr := range transports {
		tr.CloseIdleConnections()
	}
	t.Logf("%d requests in %s, %d failures", requests.Load(), duration, failures.Load())
	if failures.Load() != 0 {
		t.Fatalf("%d of %d requests failed; first: %v", failures.Load(), requests.Load(), firstErr.Load())
	}
	// Connections wind down asynchronously: allow them a moment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		settle()
		g, f := runtime.NumGoroutine(), openFDs(t)
		if g <= goroutines+5 && f <= fds+5 {
			t.Logf("goroutines %d -> %d, fds %d -> %d", goroutines, g, fds, f)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("growth after the run: goroutines %d -> %d, fds %d -> %d", goroutines, g, fds, f)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func settle() {
	runtime.GC()
	time.Sleep(100 * time.Millisecond)
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
