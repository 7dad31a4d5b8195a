package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// serve answers on a unix socket of the test's own, as the daemons do.
func serve(t *testing.T, h http.HandlerFunc) (socket string) {
	t.Helper()
	socket = filepath.Join(t.TempDir(), "d.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return socket
}

func clientFor(socket string) *http.Client {
	return &http.Client{Transport: Transport(func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	})}
}

// A JSON body travels encoded with its content type; a reader as it is.
func TestRequestBodies(t *testing.T) {
	socket := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.NewEncoder(w).Encode(map[string]string{"type": r.Header.Get("Content-Type"), "body": string(b), "x": r.Header.Get("X")})
	})
	c := clientFor(socket)
	for _, tc := range []struct {
		body any
		want map[string]string
	}{
		{map[string]int{"a": 1}, map[string]string{"type": "application/json", "body": `{"a":1}`, "x": "y"}},
		{strings.NewReader("raw"), map[string]string{"type": "", "body": "raw", "x": "y"}},
		{nil, map[string]string{"type": "", "body": "", "x": "y"}},
	} {
		req, err := NewRequest(context.Background(), "POST", "http://d/x", tc.body, http.Header{"X": {"y"}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		err = DecodeJSON(resp.Body, &got)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got["type"] != tc.want["type"] || got["body"] != tc.want["body"] || got["x"] != "y" {
			t.Errorf("body %T: server saw %v, want %v", tc.body, got, tc.want)
		}
	}
	if _, err := NewRequest(context.Background(), "POST", "http://d/x", func() {}, nil); err == nil {
		t.Error("a body JSON cannot encode was sent")
	}
}

// An answer over the bound is ResourceExhausted, not a truncated value.
func TestDecodeJSONBound(t *testing.T) {
	big := `"` + strings.Repeat("a", MaxJSONBody) + `"`
	var s string
	if err := DecodeJSON(strings.NewReader(big), &s); !errdefs.IsResourceExhausted(err) {
		t.Fatalf("over the bound: %v", err)
	}
	if err := DecodeJSON(strings.NewReader(`"ok"`), &s); err != nil || s != "ok" {
		t.Fatalf("small: %q %v", s, err)
	}
}

// An error answer carries the daemon's message, else its text, else the
// status, with the class classify gave.
func TestAPIError(t *testing.T) {
	message := func(b []byte) string {
		var e struct{ Message string }
		_ = json.Unmarshal(b, &e)
		return e.Message
	}
	classify := func(status int, _ string) error { return StatusClass(status) }
	for _, tc := range []struct {
		status int
		body   string
		want   string
		class  func(error) bool
	}{
		{404, `{"Message":"no such container"}`, "no such container", errdefs.IsNotFound},
		{409, "busy\n", "busy", errdefs.IsConflict},
		{403, "", "403 Forbidden", errdefs.IsPermissionDenied},
	} {
		status := fmt.Sprintf("%d %s", tc.status, http.StatusText(tc.status))
		resp := &http.Response{StatusCode: tc.status, Status: status, Body: io.NopCloser(strings.NewReader(tc.body))}
		err := APIError(resp, message, classify)
		if !strings.HasPrefix(err.Error(), tc.want+":") || !tc.class(err) {
			t.Errorf("%d %q: %v", tc.status, tc.body, err)
		}
	}
}

// A refused dial is Unavailable and names the daemon and its hint; the
// caller's cancellation stays a cancellation.
func TestTransportError(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "none.sock")
	unreachable := func(err error) *UnreachableError {
		return &UnreachableError{At: "d at " + socket, Hint: "start it", Err: err}
	}
	req, _ := NewRequest(context.Background(), "GET", "http://d/", nil, nil)
	_, err := clientFor(socket).Do(req)
	err = TransportError(context.Background(), err, unreachable)
	if !errdefs.IsUnavailable(err) || !strings.Contains(err.Error(), "d at "+socket+" unreachable (start it): ") {
		t.Fatalf("refused dial: %v", err)
	}
	if again := TransportError(context.Background(), err, unreachable); again != err {
		t.Fatalf("an UnreachableError is kept as it is: %v", again)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := TransportError(ctx, errors.New("x"), unreachable); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if StatusClass(http.StatusInternalServerError) != nil {
		t.Fatal("a 500 names no class")
	}
}
