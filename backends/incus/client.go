package incus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/coder/websocket"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/rest"
)

// client is a thin Incus REST client over the unix socket: JSON calls,
// background operations waited for, raw bodies (image upload) and the
// operation websockets of exec. Every failure is classed with errdefs.
type client struct {
	socket  string
	project string
	http    *http.Client
	ws      *http.Client // dials websockets (see hangupConn)
}

func newClient(socket, project string) *client {
	c := &client{socket: socket, project: project}
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", socket)
		if err != nil {
			return nil, unreachable(socket, err)
		}
		return conn, nil
	}
	c.http = &http.Client{Transport: rest.Transport(dial)}
	c.ws = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			conn, err := dial(ctx)
			if err != nil {
				return nil, err
			}
			return &hangupConn{Conn: conn}, nil
		},
		DisableKeepAlives: true, // each is hijacked as a websocket
	}}
	return c
}

// unreachable is a failed connection to incusd.
func unreachable(socket string, err error) *rest.UnreachableError {
	return &rest.UnreachableError{At: "incus at " + socket, Hint: "start it with scripts/incus.sh, or set " + EnvSocket, Err: err}
}

// request is one API call.
type request struct {
	method string
	path   string // e.g. /1.0/instances/web
	query  url.Values
	body   any // JSON-encoded unless nil or an io.Reader
	header http.Header
	// noProject leaves the project parameter out (server-wide endpoints).
	noProject bool
}

func (c *client) url(r request) string {
	q := url.Values{}
	for k, v := range r.query {
		q[k] = v
	}
	if !r.noProject && c.project != "" && c.project != "default" {
		q.Set("project", c.project)
	}
	// r.path holds escaped segments (an alias may contain "/").
	u := "http://incus" + r.path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func (c *client) build(ctx context.Context, r request) (*http.Request, error) {
	req, err := rest.NewRequest(ctx, r.method, c.url(r), r.body, r.header)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	return req, nil
}

// raw sends r and returns the response when its status is 2xx; any other
// status is an errdefs-classed error carrying Incus's message.
func (c *client) raw(ctx context.Context, r request) (*http.Response, error) {
	req, err := c.build(ctx, r)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, apiError(resp)
}

// call sends r and decodes the answer's metadata into out (when not nil).
// An async answer is waited for: out then receives the finished
// operation's metadata.
func (c *client) call(ctx context.Context, r request, out any) error {
	resp, err := c.raw(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env response
	if err := rest.DecodeJSON(resp.Body, &env); err != nil {
		return fmt.Errorf("read %s %s answer: %w", r.method, r.path, err)
	}
	switch env.Type {
	case "async":
		var op operation
		if err := json.Unmarshal(env.Metadata, &op); err != nil {
			return fmt.Errorf("read %s %s operation: %w", r.method, r.path, err)
		}
		op, err := c.wait(ctx, op.ID)
		if err != nil {
			return err
		}
		return unmarshalMeta(op.Metadata, out)
	case "error":
		return fmt.Errorf("%s: %w", env.Error, classify(env.ErrorCode, env.Error))
	}
	return unmarshalMeta(env.Metadata, out)
}

// start sends r, which answers with a background operation, and returns
// the operation without waiting for it.
func (c *client) start(ctx context.Context, r request) (operation, error) {
	resp, err := c.raw(ctx, r)
	if err != nil {
		return operation{}, err
	}
	defer resp.Body.Close()
	var env response
	if err := rest.DecodeJSON(resp.Body, &env); err != nil {
		return operation{}, fmt.Errorf("read %s %s answer: %w", r.method, r.path, err)
	}
	var op operation
	if env.Type != "async" || json.Unmarshal(env.Metadata, &op) != nil || op.ID == "" {
		return operation{}, fmt.Errorf("%s %s: expected a background operation, got a %s answer: %w", r.method, r.path, env.Type, errdefs.ErrUnknown)
	}
	return op, nil
}

// errOperationDropped: the operation was not found when waited for.
// Incus forgets an operation 5 s after it ended, so a wait that comes
// later (a loaded host) cannot tell how it ended; the caller reads the
// outcome from the object's state. The error is also errdefs.NotFound.
var errOperationDropped = errors.New("incus dropped the operation (it ended over 5 s before the wait)")

// wait waits for an operation to end; a failed one is an error with its
// message, classed like an API error.
func (c *client) wait(ctx context.Context, id string) (operation, error) {
	for {
		var op operation
		err := c.call(ctx, request{method: "GET", path: "/1.0/operations/" + url.PathEscape(id) + "/wait", query: url.Values{"timeout": {"-1"}}}, &op)
		if errdefs.IsNotFound(err) {
			return op, fmt.Errorf("operation %s: %w (%w)", id, errOperationDropped, err)
		}
		if err != nil {
			return op, err
		}
		switch op.Status {
		case "Success":
			return op, nil
		case "Failure", "Cancelled":
			return op, fmt.Errorf("%s: %w", op.Err, classify(0, op.Err))
		}
		if ctx.Err() != nil {
			return op, ctx.Err()
		}
	}
}

func unmarshalMeta(data json.RawMessage, out any) error {
	if out == nil || len(data) == 0 || string(data) == "null" {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("read incus answer: %w", err)
	}
	return nil
}

// transportError classes a failed round trip (see rest.TransportError).
func (c *client) transportError(ctx context.Context, err error) error {
	return rest.TransportError(ctx, err, func(err error) *rest.UnreachableError { return unreachable(c.socket, err) })
}

// apiError turns a non-2xx answer into an errdefs-classed error.
func apiError(resp *http.Response) error {
	return rest.APIError(resp, func(body []byte) string {
		var env response
		_ = json.Unmarshal(body, &env)
		return env.Error
	}, classify)
}

// classify maps an HTTP status (and, for Incus's answers that say more in
// words than in status, the message) to an errdefs class.
func classify(status int, msg string) error {
	low := strings.ToLower(msg)
	switch {
	case status == http.StatusNotFound, strings.Contains(low, "not found"):
		return errdefs.ErrNotFound
	case status == http.StatusConflict, strings.Contains(low, "already exists"), strings.Contains(low, "already in use"),
		strings.Contains(low, "is already running"), strings.Contains(low, "is not running"), strings.Contains(low, "instance is running"),
		strings.Contains(low, "is busy"), strings.Contains(low, "currently in use"), strings.Contains(low, "already defined"):
		return errdefs.ErrConflict
	case status == http.StatusBadRequest, strings.Contains(low, "invalid"):
		return errdefs.ErrInvalidArgument
	}
	if class := rest.StatusClass(status); class != nil {
		return class
	}
	return errdefs.ErrUnknown
}

// errOperationGone: an operation's websocket could not be connected
// because the operation is no longer running (Incus answers 404 once it
// dropped it, 500 "Only running operations can be connected" before).
var errOperationGone = errors.New("the operation is no longer running")

// websocket opens one of an operation's websockets.
func (c *client) websocket(ctx context.Context, opID, secret string) (*websocket.Conn, error) {
	u := "ws://incus/1.0/operations/" + url.PathEscape(opID) + "/websocket?secret=" + url.QueryEscape(secret)
	if c.project != "" && c.project != "default" {
		u += "&project=" + url.QueryEscape(c.project)
	}
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.ws})
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusInternalServerError) {
			msg := resp.Status
			if resp.Body != nil {
				msg = apiError(resp).Error()
			}
			return nil, fmt.Errorf("websocket of operation %s: %s: %w", opID, msg, errOperationGone)
		}
		return nil, fmt.Errorf("websocket of operation %s: %w", opID, c.transportError(ctx, err))
	}
	conn.SetReadLimit(-1)
	return conn, nil
}
