package podman

import (
	"bufio"
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

	"github.com/cornus-dev/cornus/backends/internal/rest"
)

// apiPrefix is the libpod API path every call uses. Podman 4.3 answers the
// /v5.0.0 prefix too (the version in the path is not checked against the
// server's), so one prefix serves podman 4 and 5.
const apiPrefix = "/v5.0.0/libpod"

// client is a thin libpod REST client: JSON calls, raw streams and
// hijacked connections over one endpoint. It classes every failure with
// errdefs (see apiError) and names the endpoint when it is unreachable.
type client struct {
	ep   func() endpoint // the endpoint: a socket, or the supervised service's
	http *http.Client
}

func newClient(ep func() endpoint) *client {
	c := &client{ep: ep}
	c.http = &http.Client{Transport: rest.Transport(c.dial)}
	return c
}

// dial connects to the endpoint.
func (c *client) dial(ctx context.Context) (net.Conn, error) {
	ep := c.ep()
	var d net.Dialer
	conn, err := d.DialContext(ctx, ep.network, ep.address)
	if err != nil {
		return nil, unreachable(ep, err)
	}
	return conn, nil
}

// unreachable is a failed connection to the endpoint.
func unreachable(ep endpoint, err error) *rest.UnreachableError {
	return &rest.UnreachableError{At: fmt.Sprintf("podman at %s", ep), Err: err}
}

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
	return rest.NewRequest(ctx, r.method, r.url(ep), r.body, r.header)
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
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, rest.MaxErrorBody))
		return nil
	}
	if err := rest.DecodeJSON(resp.Body, out); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &syntax) && !errors.As(err, &typ) && !errdefs.IsResourceExhausted(err) {
			err = c.transportError(ctx, err) // the answer broke off: podman went away
		}
		return fmt.Errorf("read %s %s answer: %w", r.method, r.path, err)
	}
	return nil
}

// transportError classes a failed round trip (see rest.TransportError).
func (c *client) transportError(ctx context.Context, err error) error {
	return rest.TransportError(ctx, err, func(err error) *rest.UnreachableError { return unreachable(c.ep(), err) })
}

// libpodError is podman's error answer.
type libpodError struct {
	Cause    string `json:"cause"`
	Message  string `json:"message"`
	Response int    `json:"response"`
}

// apiError turns a non-2xx answer into an errdefs-classed error.
func apiError(resp *http.Response) error {
	return rest.APIError(resp, func(body []byte) string {
		var e libpodError
		_ = json.Unmarshal(body, &e)
		return e.Message
	}, classify)
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
	if class := rest.StatusClass(status); class != nil {
		return class
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
	conn, err := c.dial(ctx)
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
