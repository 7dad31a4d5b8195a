package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
)

// dialWS opens a WebSocket to path with the token.
func (c *Client) dialWS(ctx context.Context, path, rawQuery string) (*websocket.Conn, *http.Response, error) {
	u := *c.base
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	u.Path += path
	u.RawQuery = rawQuery
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient: c.http, HTTPHeader: http.Header{"Authorization": {"Bearer " + c.token}}, CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if resp != nil && resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusSwitchingProtocols {
			if resp.Body != nil {
				return nil, nil, readError(resp)
			}
			return nil, nil, fmt.Errorf("server %s answered %s", c.base, resp.Status)
		}
		return nil, nil, fmt.Errorf("server %s unreachable: %w", c.base, errors.Join(err, errdefs.ErrUnavailable))
	}
	return conn, resp, nil
}

// Exec runs a process in a service container on the server and returns
// its exit code: stdin, output, TTY and resizes travel over a WebSocket.
func (p *Projects) Exec(ctx context.Context, project string, o engine.ExecOptions) (int, error) {
	c, _, err := p.dialWS(ctx, projectPath(project, "exec"), "")
	if err != nil {
		return -1, err
	}
	defer func() { _ = c.CloseNow() }() // after a normal close, only says it is closed
	c.SetReadLimit(4 << 20)
	start := api.ExecStart{Service: o.Service, Index: o.Index, Cmd: o.Cmd, Env: o.Env, User: o.User, WorkingDir: o.WorkingDir,
		TTY: o.TTY, Stdin: o.Stdin != nil, Privileged: o.Privileged, Size: o.Size, AgentSession: p.AgentSession}
	b, _ := json.Marshal(start)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		return -1, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Stdin != nil {
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := o.Stdin.Read(buf)
				if n > 0 && c.Write(ctx, websocket.MessageBinary, buf[:n]) != nil {
					return
				}
				if err != nil {
					b, _ := json.Marshal(api.Control{CloseIn: true})
					_ = c.Write(ctx, websocket.MessageText, b)
					return
				}
			}
		}()
	}
	if o.Resize != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case sz, ok := <-o.Resize:
					if !ok {
						return
					}
					b, _ := json.Marshal(api.Control{Resize: &sz})
					_ = c.Write(ctx, websocket.MessageText, b)
				}
			}
		}()
	}
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return -1, fmt.Errorf("exec: the server closed the stream before the exit code: %w", err)
		}
		if typ == websocket.MessageBinary && len(data) > 0 {
			w := o.Stdout
			if data[0] == api.StreamStderr && o.Stderr != nil && !o.TTY {
				w = o.Stderr
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
		switch {
		case ctl.Error != nil:
			return -1, ctl.Error.Err()
		case ctl.ExitCode != nil:
			return *ctl.ExitCode, nil
		}
	}
}
