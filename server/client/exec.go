package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/coder/websocket"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/muxconn"
	"github.com/cornus-dev/cornus/spec"
)

// dialWS opens a WebSocket to path with the token.
func (c *Client) dialWS(ctx context.Context, path string) (*websocket.Conn, *http.Response, error) {
	u := strings.Replace(c.endpoint(path, nil), "http", "ws", 1) // http(s)://… → ws(s)://…
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{
		HTTPClient: c.http, HTTPHeader: c.bearer(), CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if resp != nil && resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusSwitchingProtocols {
			if resp.Body != nil {
				return nil, nil, readError(resp)
			}
			return nil, nil, fmt.Errorf("server %s answered %s", c.base, resp.Status)
		}
		return nil, nil, c.unreachable(err)
	}
	return conn, resp, nil
}

// dialMux opens the upgraded connection of a session or relay to path
// with the token (muxconn: without WebSocket frames where the server
// agrees).
func (c *Client) dialMux(ctx context.Context, path string, q url.Values) (*muxconn.Conn, *http.Response, error) {
	h := c.bearer()
	api.OfferEarly(h) // dispatch keeps what follows a header
	conn, resp, err := muxconn.Dial(ctx, c.http, c.endpoint(path, q), h)
	switch {
	case err != nil:
		return nil, nil, c.unreachable(err)
	case conn == nil:
		defer resp.Body.Close()
		return nil, nil, readError(resp)
	}
	return conn, resp, nil
}

// Exec runs a process in a service container on the server and returns
// its exit code: stdin, output, TTY and resizes travel over a WebSocket.
func (p *Projects) Exec(ctx context.Context, project string, o engine.ExecOptions) (int, error) {
	start := api.ExecStart{Service: o.Service, Index: o.Index, Cmd: o.Cmd, Env: o.Env, User: o.User, WorkingDir: o.WorkingDir,
		TTY: o.TTY, Stdin: o.Stdin != nil, Privileged: o.Privileged, Size: o.Size, AgentSession: p.AgentSession}
	ctl, err := p.stdio(ctx, projectPath(project, "exec"), start, stdio{in: o.Stdin, out: o.Stdout, err: o.Stderr, tty: o.TTY, resize: o.Resize})
	if err != nil {
		return -1, err
	}
	if ctl.ExitCode == nil {
		return -1, errors.New("exec: the server sent no exit code")
	}
	return *ctl.ExitCode, nil
}

// stdio are a process's streams on this side.
type stdio struct {
	in       io.Reader
	out, err io.Writer
	tty      bool
	resize   <-chan backends.TermSize
}

// stdio carries one process's stdio over the WebSocket at path, started
// by start, and returns the server's last Control (its error as an
// error).
func (p *Projects) stdio(ctx context.Context, path string, start any, s stdio) (api.Control, error) {
	c, _, err := p.dialWS(ctx, path)
	if err != nil {
		return api.Control{}, err
	}
	defer func() { _ = c.CloseNow() }() // after a normal close, only says it is closed
	c.SetReadLimit(4 << 20)
	b, _ := json.Marshal(start)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		return api.Control{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.in != nil {
		go sendStdin(ctx, c, s.in)
	}
	if s.resize != nil {
		go sendResizes(ctx, c, s.resize)
	}
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return api.Control{}, fmt.Errorf("the server closed the stream before the exit code: %w", err)
		}
		if typ == websocket.MessageBinary && len(data) > 0 {
			w := s.out
			if data[0] == api.StreamStderr && s.err != nil && !s.tty {
				w = s.err
			}
			if w != nil {
				_, _ = w.Write(data[1:])
			}
			continue
		}
		var ctl api.Control
		if json.Unmarshal(data, &ctl) != nil {
			continue
		}
		if ctl.Error != nil {
			return ctl, ctl.Error.Err()
		}
		if ctl.ExitCode != nil || ctl.Container != "" {
			return ctl, nil
		}
	}
}

// sendStdin sends in as binary messages, then the end of stdin.
func sendStdin(ctx context.Context, c *websocket.Conn, in io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 && c.Write(ctx, websocket.MessageBinary, buf[:n]) != nil {
			return
		}
		if err != nil {
			b, _ := json.Marshal(api.Control{CloseIn: true})
			_ = c.Write(ctx, websocket.MessageText, b)
			return
		}
	}
}

// sendResizes sends each terminal size as a Control.
func sendResizes(ctx context.Context, c *websocket.Conn, resize <-chan backends.TermSize) {
	for {
		select {
		case <-ctx.Done():
			return
		case sz, ok := <-resize:
			if !ok {
				return
			}
			b, _ := json.Marshal(api.Control{Resize: &sz})
			_ = c.Write(ctx, websocket.MessageText, b)
		}
	}
}

// Run runs compose run's one-off container on the server (api.RunStart),
// its stdio carried as an exec's.
func (p *Projects) Run(ctx context.Context, sp spec.Project, o engine.RunOptions) (engine.RunResult, error) {
	tty := false
	if a, ok := sp.Services[o.Service]; ok {
		tty = a.TTY
	}
	start := api.RunStart{Spec: sp, Service: o.Service, Name: o.Name, NoDeps: o.NoDeps, Detach: o.Detach, Remove: o.Remove,
		UseAliases: o.UseAliases, Stdin: o.Stdin != nil, TTY: tty}
	ctl, err := p.stdio(ctx, projectPath(sp.Name, "run"), start, stdio{in: o.Stdin, out: o.Stdout, err: o.Stderr, tty: tty, resize: o.Resize})
	res := engine.RunResult{Name: ctl.Container}
	if ctl.ExitCode != nil {
		res.ExitCode = *ctl.ExitCode
	}
	return res, err
}

// AttachService joins a replica's stdio on the server until it exits
// (its exit code) or ctx ends (-1: detached).
func (p *Projects) AttachService(ctx context.Context, project string, o engine.AttachServiceOptions) (int, error) {
	start := api.AttachStart{Service: o.Service, Index: o.Index, Stdin: o.Stdin != nil, TTY: o.TTY}
	ctl, err := p.stdio(ctx, projectPath(project, "attach-stdio"), start, stdio{in: o.Stdin, out: o.Stdout, err: o.Stderr, tty: o.TTY, resize: o.Resize})
	if ctx.Err() != nil {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	if ctl.ExitCode == nil {
		return -1, errors.New("attach: the server sent no exit code")
	}
	return *ctl.ExitCode, nil
}
