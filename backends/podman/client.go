package podman

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/containerd/errdefs"
)

// apiPrefix is the libpod API path every call uses. Podman 4.3 answers the
// /v5.0.0 prefix too (the version in the path is not checked against the
// server's), so one prefix serves podman 4 and 5.
const apiPrefix = "/v5.0.0/libpod"

// Bounds on what the client buffers.
const (
	maxJSONBody  = 64 << 20 // one decoded JSON answer (a list of every container, image, ...)
	maxErrorBody = 64 << 10 // an error answer
)

// client is a thin libpod REST client: JSON calls, raw streams and
// hijacked connections over one endpoint. It classes every failure with
// errdefs (see apiError) and names the endpoint when it is unreachable.
type client struct {
	ep   func() endpoint // the endpoint: a socket, or the supervised service's
	http *http.Client
}

func newClient(ep func() endpoint) *client {
	c := &client{ep: ep}
	tr := &http.Transport{
		DialContext:         c.dial,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	c.http = &http.Client{Transport: tr}
	return c
}

// dial connects to the endpoint; the HTTP host in URLs is a placeholder.
func (c *client) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	ep := c.ep()
	var d net.Dialer
	conn, err := d.DialContext(ctx, ep.network, ep.address)
	if err != nil {
		return nil, &unreachableError{ep: ep, err: err}
	}
	return conn, nil
}

// unreachableError is a failed connection to the endpoint.
type unreachableError struct {
	ep  endpoint
	err error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("podman at %s unreachable: %v", e.ep, e.err)
}
func (e *unreachableError) Unwrap() []error { return []error{e.err, errdefs.ErrUnavailable} }

// request is one API call.
type request struct {
	method string
	path   string // below apiPrefix, e.g. "/containers/json"
	query  url.Values
	body   any // JSON-encoded when not nil and not an io.Reader
	header http.Header
}

func (r request) url(ep endpoint) string {
	host := "podman"
	if ep.network == "tcp" {
		host = ep.address
	}
	u := url.URL{Scheme: "http", Host: host, Path: apiPrefix + r.path, RawQuery: r.query.Encode()}
	return u.String()
}

func (r request) build(ctx context.Context, ep endpoint) (*http.Request, error) {
	var body io.Reader
	header := r.header.Clone()
	if header == nil {
		header = http.Header{}
	}
	switch b := r.body.(type) {
	case nil:
	case io.Reader:
		body = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(data)
		header.Set("Content-Type", "application/json")
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url(ep), body)
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}

// do sends r and returns the response when its status is 2xx (or
// 304, which callers read as "already so"); any other status is an
// errdefs-classed error carrying podman's message.
func (c *client) do(ctx context.Context, r request) (*http.Response, error) {
	req, err := r.build(ctx, c.ep())
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusNotModified {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, apiError(resp)
}

// call sends r and decodes a JSON answer into out (when not nil); a 304
// Not Modified answer (already stopped, ...) is no error.
func (c *client) call(ctx context.Context, r request, out any) error {
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return nil
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := decodeJSON(resp.Body, out); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &syntax) && !errors.As(err, &typ) && !errdefs.IsResourceExhausted(err) {
			err = c.transportError(ctx, err) // the answer broke off: podman went away
		}
		return fmt.Errorf("read %s %s answer: %w", r.method, r.path, err)
	}
	return nil
}

// decodeJSON decodes one bounded JSON value.
func decodeJSON(r io.Reader, out any) error {
	lr := &io.LimitedReader{R: r, N: maxJSONBody + 1}
	if err := json.NewDecoder(lr).Decode(out); err != nil {
		if lr.N <= 0 {
			return fmt.Errorf("answer larger than %d bytes: %w", maxJSONBody, errdefs.ErrResourceExhausted)
		}
		return err
	}
	return nil
}

// transportError classes a failed round trip: the caller's own deadline
// or cancellation stays as it is, anything else means podman cannot be
// reached (or went away mid-call) and is Unavailable.
func (c *client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var unreachable *unreachableError
	if errors.As(err, &unreachable) {
		return unreachable
	}
	return &unreachableError{ep: c.ep(), err: err}
}

// libpodError is podman's error answer.
type libpodError struct {
	Cause    string `json:"cause"`
	Message  string `json:"message"`
	Response int    `json:"response"`
}

// apiError turns a non-2xx answer into an errdefs-classed error.
func apiError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var e libpodError
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Message != "" {
		msg = e.Message
	}
	if msg == "" {
		msg = resp.Status
	}
	return fmt.Errorf("%s: %w", msg, classify(resp.StatusCode, msg))
}

// classify maps an HTTP status (and, for podman's 500s that are really
// state conflicts, the message) to an errdefs class.
func classify(status int, msg string) error {
	low := strings.ToLower(msg)
	// What a rootless service on cgroup v1 cannot do at all (stats, pause),
	// whatever the status podman chose for it.
	if strings.Contains(low, "only available for cgroup v2") || (strings.Contains(low, "rootless") && strings.Contains(low, "cgroup v1")) {
		return errdefs.ErrNotImplemented
	}
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
	switch {
	case strings.Contains(low, "no such "), strings.Contains(low, "network not found"), strings.Contains(low, "image not known"):
		return errdefs.ErrNotFound
	case strings.Contains(low, "container state improper"), strings.Contains(low, "is not running"),
		strings.Contains(low, "already in use"), strings.Contains(low, "is being used"),
		strings.Contains(low, "has dependent containers"):
		return errdefs.ErrConflict
	case strings.Contains(low, "invalid"), strings.Contains(low, "does not match any of the supported image formats"):
		return errdefs.ErrInvalidArgument
	}
	return errdefs.ErrInternal
}

// hijacked is a connection podman took over for a raw stream (exec,
// attach): read the output from Reader, write stdin to Conn.
type hijacked struct {
	Conn   net.Conn
	Reader *bufio.Reader
}

// CloseWrite ends stdin, keeping the output open.
func (h hijacked) CloseWrite() error {
	if cw, ok := h.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (h hijacked) Close() error { return h.Conn.Close() }

// hijack sends r on a connection of its own and, once podman answered 2xx
// (or 101), hands the connection over as a raw stream.
func (c *client) hijack(ctx context.Context, r request) (hijacked, error) {
	ep := c.ep()
	conn, err := c.dial(ctx, "", "")
	if err != nil {
		return hijacked{}, err
	}
	req, err := r.build(ctx, ep)
	if err != nil {
		conn.Close()
		return hijacked{}, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	// Writing and reading the answer obey ctx through the deadline.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return hijacked{}, c.transportError(ctx, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return hijacked{}, c.transportError(ctx, err)
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusSwitchingProtocols {
		defer conn.Close()
		return hijacked{}, apiError(resp)
	}
	if !stop() && ctx.Err() != nil {
		conn.Close()
		return hijacked{}, ctx.Err()
	}
	return hijacked{Conn: conn, Reader: br}, nil
}

// filters encodes libpod list filters: {"label":["k=v","k2"], ...}.
func filters(f map[string][]string) string {
	data, _ := json.Marshal(f)
	return string(data)
}

// labelFilters turns ListOptions.Labels into libpod label filters: key=value,
// or key alone when the value is "".
func labelFilters(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for k, v := range labels {
		if v == "" {
			out = append(out, k)
		} else {
			out = append(out, k+"="+v)
		}
	}
	return out
}
