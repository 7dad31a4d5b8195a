package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Malformed, huge and slow requests are refused with a clear error.
func TestMalformedHugeAndSlowRequests(t *testing.T) {
	ts := newTestServer(t)
	p := uniqueProject("lim")
	post := func(body []byte) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.http.URL+"/v1/projects/"+p+"/up", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ts.alice)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		return resp.StatusCode, b.String()
	}
	if code, body := post([]byte(`{"spec": {"name": `)); code != http.StatusBadRequest || !strings.Contains(body, "request body") {
		t.Fatalf("malformed JSON: %d %s", code, body)
	}
	if code, body := post([]byte(`{"spec": {"name": "` + p + `"}, "surprise": 1}`)); code != http.StatusBadRequest || !strings.Contains(body, "surprise") {
		t.Fatalf("unknown field: %d %s", code, body)
	}
	huge := append([]byte(`{"spec": {"name": "`), bytes.Repeat([]byte("x"), maxSpecBody+10)...)
	if code, body := post(huge); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than") {
		t.Fatalf("huge body: %d %.200s", code, body)
	}
	if code, body := post([]byte(`{"spec": {"name": "other"}}`)); code != http.StatusBadRequest || !strings.Contains(body, "path says") {
		t.Fatalf("spec for another project: %d %s", code, body)
	}
	if n := len(ts.containers(p)); n != 0 {
		t.Fatalf("refused requests created %d containers", n)
	}
	// Oversized headers.
	req, _ := http.NewRequest(http.MethodGet, ts.http.URL+"/v1/info", nil)
	req.Header.Set("Authorization", "Bearer "+ts.alice)
	req.Header.Set("X-Pad", strings.Repeat("p", maxHeaderBytes*2))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("huge headers: %d", resp.StatusCode)
		}
	}
}

// A client that trickles its headers (slowloris) is cut off; the real
// server's read-header limit is checked here on a shortened copy.
func TestSlowHeadersAreCutOff(t *testing.T) {
	ts := newTestServer(t)
	hs := ts.srv.httpServer(context.Background())
	hs.ReadHeaderTimeout = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }() // ErrServerClosed after the Close
	defer hs.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, _ = c.Write([]byte("GET /v1/info HTTP/1.1\r\nHost: x\r\n"))
	closed := make(chan struct{})
	go func() {
		buf := make([]byte, 1024)
		for {
			if _, err := c.Read(buf); err != nil {
				close(closed)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-closed:
			if time.Since(start) > 5*time.Second {
				t.Fatalf("cut off only after %v", time.Since(start))
			}
			if readHeaderLimit > 30*time.Second {
				t.Fatalf("the server's read-header limit is %v", readHeaderLimit)
			}
			return
		case <-time.After(100 * time.Millisecond):
			_, _ = c.Write([]byte("X-Slow: 1\r\n"))
		}
		if i > 100 {
			t.Fatal("a trickling client was never cut off")
		}
	}
}

// Security round 2, item 13: a session or relay carries at most
// maxStreams streams at once; one more is refused with a reason.
func TestStreamCap(t *testing.T) {
	c := newStreamCap()
	for i := 0; i < maxStreams; i++ {
		a, _ := net.Pipe()
		if !c.take(a) {
			t.Fatalf("stream %d refused", i)
		}
	}
	a, b := net.Pipe()
	got := make(chan string, 1)
	go func() { data, _ := io.ReadAll(b); got <- string(data) }()
	if c.take(a) {
		t.Fatal("stream beyond the cap admitted")
	}
	if s := <-got; !strings.Contains(s, "streams are open") {
		t.Fatalf("refusal: %q", s)
	}
	c.put()
	a2, _ := net.Pipe()
	if !c.take(a2) {
		t.Fatal("a freed slot was not reused")
	}
}
