package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/containerd/errdefs"
)

// Bounds on what a client buffers.
const (
	MaxJSONBody  = 64 << 20 // one decoded JSON answer (every container, image, instance, ...)
	MaxErrorBody = 64 << 10 // an error answer
)

// Transport dials every connection with dial (the host in URLs is a
// placeholder) and keeps connections alive for reuse.
func Transport(dial func(ctx context.Context) (net.Conn, error)) *http.Transport {
	return &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
}

// NewRequest builds a request whose body is JSON-encoded unless it is nil
// or an io.Reader (sent as it is).
func NewRequest(ctx context.Context, method, url string, body any, header http.Header) (*http.Request, error) {
	var r io.Reader
	header = header.Clone()
	if header == nil {
		header = http.Header{}
	}
	switch b := body.(type) {
	case nil:
	case io.Reader:
		r = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode %s request: %w", method, err)
		}
		r = bytes.NewReader(data)
		header.Set("Content-Type", "application/json")
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}

// DecodeJSON decodes one JSON value of at most MaxJSONBody bytes; a larger
// one is ResourceExhausted.
func DecodeJSON(r io.Reader, out any) error {
	lr := &io.LimitedReader{R: r, N: MaxJSONBody + 1}
	if err := json.NewDecoder(lr).Decode(out); err != nil {
		if lr.N <= 0 {
			return fmt.Errorf("answer larger than %d bytes: %w", MaxJSONBody, errdefs.ErrResourceExhausted)
		}
		return err
	}
	return nil
}

// APIError turns a non-2xx answer into an error: the daemon's message
// (what message finds in the body, else the body's text, else the
// status) wrapping the class classify gives it.
func APIError(resp *http.Response, message func(body []byte) string, classify func(status int, msg string) error) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	msg := message(data)
	if msg == "" {
		msg = strings.TrimSpace(string(data))
	}
	if msg == "" {
		msg = resp.Status
	}
	return fmt.Errorf("%s: %w", msg, classify(resp.StatusCode, msg))
}

// UnreachableError is a failed connection to a daemon: Unavailable.
type UnreachableError struct {
	At   string // "podman at unix:///run/podman/podman.sock"
	Hint string // how to start it, or ""
	Err  error
}

func (e *UnreachableError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s unreachable (%s): %v", e.At, e.Hint, e.Err)
	}
	return fmt.Sprintf("%s unreachable: %v", e.At, e.Err)
}

// Unwrap is the cause and errdefs.ErrUnavailable.
func (e *UnreachableError) Unwrap() []error { return []error{e.Err, errdefs.ErrUnavailable} }

// TransportError classes a failed round trip: the caller's own deadline or
// cancellation stays as it is; anything else means the daemon cannot be
// reached (or went away mid-call), which unreachable describes.
func TransportError(ctx context.Context, err error, unreachable func(error) *UnreachableError) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var u *UnreachableError
	if errors.As(err, &u) {
		return u
	}
	return unreachable(err)
}

// StatusClass is the errdefs class an HTTP status names, nil for a status
// that names none (a 500 says nothing of its cause).
func StatusClass(status int) error {
	switch status {
	case http.StatusBadRequest:
		return errdefs.ErrInvalidArgument
	case http.StatusUnauthorized, http.StatusForbidden:
		return errdefs.ErrPermissionDenied
	case http.StatusNotFound:
		return errdefs.ErrNotFound
	case http.StatusConflict:
		return errdefs.ErrConflict
	case http.StatusNotImplemented:
		return errdefs.ErrNotImplemented
	case http.StatusServiceUnavailable:
		return errdefs.ErrUnavailable
	}
	return nil
}
