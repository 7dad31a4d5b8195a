package muxconn

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coder/websocket"
)

// echo serves one upgraded connection at a time, echoing what it reads,
// and reports on served whether its side was framed.
func echo(t *testing.T, accept func(w http.ResponseWriter, r *http.Request) (io.ReadWriteCloser, bool, error)) (string, <-chan bool) {
	srv, served := echoServer(accept)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, served
}

func echoServer(accept func(w http.ResponseWriter, r *http.Request) (io.ReadWriteCloser, bool, error)) (*httptest.Server, <-chan bool) {
	served := make(chan bool, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, `{"message":"no token"}`, http.StatusUnauthorized)
			return
		}
		c, framed, err := accept(w, r)
		if err != nil {
			return
		}
		defer c.Close()
		served <- framed
		_, _ = io.Copy(c, c)
	}))
	return srv, served
}

func cornusAccept(w http.ResponseWriter, r *http.Request) (io.ReadWriteCloser, bool, error) {
	c, err := Accept(context.Background(), w, r)
	if err != nil {
		return nil, false, err
	}
	framed := c.Framed()
	return c, framed, nil
}

// roundTrip sends 4 MiB through c and reads them back.
func roundTrip(t *testing.T, c io.ReadWriteCloser) {
	t.Helper()
	data := make([]byte, 4<<20)
	_, _ = rand.Read(data)
	go func() { _, _ = c.Write(data) }()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the bytes read back differ from those sent")
	}
}

var token = http.Header{"Authorization": {"Bearer t"}}

// Issue 29: two cornus ends agree on the bare stream (no WebSocket
// frames either way), and the bytes arrive whole.
func TestRawBetweenCornusEnds(t *testing.T) {
	url, served := echo(t, cornusAccept)
	c, resp, err := Dial(context.Background(), http.DefaultClient, url+"/x", token)
	if err != nil || c == nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.Close()
	if c.Framed() || <-served || resp.Header.Get(HeaderStream) != "raw" {
		t.Fatalf("cornus to cornus: framed (client %v), want the bare stream both ways", c.Framed())
	}
	roundTrip(t, c)
}

// Over TLS with HTTP/2 offered (as cornus serve's listener does), the
// upgrade still goes over HTTP/1.1 and the stream is bare.
func TestRawOverTLS(t *testing.T) {
	srv, served := echoServer(cornusAccept)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, resp, err := Dial(context.Background(), srv.Client(), srv.URL+"/x", token)
	if err != nil || c == nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.Close()
	if c.Framed() || <-served {
		t.Fatal("over TLS: framed, want the bare stream")
	}
	roundTrip(t, c)
}

// A server that speaks only WebSocket: the client dials again as a
// WebSocket client and works; a plain WebSocket client of a cornus server
// gets WebSocket messages.
func TestWebSocketPeers(t *testing.T) {
	url, served := echo(t, func(w http.ResponseWriter, r *http.Request) (io.ReadWriteCloser, bool, error) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return nil, false, err
		}
		return WebSocket(context.Background(), ws), true, nil
	})
	c, _, err := Dial(context.Background(), http.DefaultClient, url+"/x", token)
	if err != nil || c == nil {
		t.Fatalf("dial a WebSocket-only server: %v", err)
	}
	if !c.Framed() {
		t.Error("a WebSocket-only server: the client did not fall back to WebSocket messages")
	}
	<-served // the first, refused-as-raw upgrade ended at once
	roundTrip(t, c)
	c.Close()

	url, served = echo(t, cornusAccept)
	ws, _, err := websocket.Dial(context.Background(), url+"/x", &websocket.DialOptions{HTTPHeader: token})
	if err != nil {
		t.Fatalf("a WebSocket client of a cornus server: %v", err)
	}
	wc := WebSocket(context.Background(), ws)
	defer wc.Close()
	if !<-served {
		t.Error("a plain WebSocket client: the server did not answer in WebSocket messages")
	}
	roundTrip(t, wc)
}

// A refused upgrade comes back as the response, readable.
func TestRefusal(t *testing.T) {
	url, _ := echo(t, cornusAccept)
	c, resp, err := Dial(context.Background(), http.DefaultClient, url+"/x", nil)
	if err != nil || c != nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial without the token: conn %v, resp %v, err %v; want the 401", c, resp, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte("no token")) {
		t.Errorf("the refusal's body: %q", b)
	}
}
