package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/coder/websocket"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
)

// maxControl bounds a text message on an exec WebSocket.
const maxControl = 64 << 10

// exec is GET /v1/projects/{project}/exec: a WebSocket carrying one exec.
// The client's first text message is an api.ExecStart; then binary
// messages are stdin and text ones api.Control (resize, end of stdin).
// The server sends output as binary messages prefixed with the stream id
// and ends with a Control holding the exit code or the error.
func (s *Server) exec(w http.ResponseWriter, r *http.Request, id identity) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	defer func() { _ = c.CloseNow() }() // after a normal close, only says it is closed
	c.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var start api.ExecStart
	typ, data, err := c.Read(ctx)
	if err != nil {
		return
	}
	if typ != websocket.MessageText || len(data) > maxControl || json.Unmarshal(data, &start) != nil {
		finishExec(ctx, c, -1, fmt.Errorf("%w: the first message must be an exec start", errdefs.ErrInvalidArgument))
		return
	}
	out := &wsWriter{ctx: ctx, c: c, stream: api.StreamStdout}
	errw := &wsWriter{ctx: ctx, c: c, stream: api.StreamStderr}
	o := engine.ExecOptions{Service: start.Service, Index: start.Index, ExecOptions: backends.ExecOptions{
		Cmd: start.Cmd, Env: start.Env, User: start.User, WorkingDir: start.WorkingDir, TTY: start.TTY,
		Privileged: start.Privileged, Stdout: out, Stderr: errw, Size: start.Size,
	}}
	resize := make(chan backends.TermSize, 4)
	if start.TTY {
		o.Resize = resize
	}
	var stdin *io.PipeWriter
	if start.Stdin {
		var pr *io.PipeReader
		pr, stdin = io.Pipe()
		o.Stdin = pr
	}
	if start.AgentSession != "" {
		sock, done, err := s.forwardAgent(execReplica{ctx: ctx, project: r.PathValue("project"), service: start.Service, index: start.Index}, id.tenant, start.AgentSession)
		if err != nil {
			finishExec(ctx, c, -1, err)
			return
		}
		defer done()
		o.Env = append(slices.Clone(o.Env), "SSH_AUTH_SOCK="+sock)
	}
	go readClient(ctx, c, stdin, resize)
	code, err := s.e.Exec(ctx, r.PathValue("project"), o)
	finishExec(ctx, c, code, err)
}

// execReplica names the replica an exec runs in.
type execReplica struct {
	ctx              context.Context
	project, service string
	index            int
}

// readClient feeds stdin and resizes from the client until it is done.
func readClient(ctx context.Context, c *websocket.Conn, stdin *io.PipeWriter, resize chan<- backends.TermSize) {
	defer func() {
		if stdin != nil {
			stdin.Close()
		}
	}()
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			if stdin != nil {
				if _, err := stdin.Write(data); err != nil {
					stdin = nil
				}
			}
			continue
		}
		var ctl api.Control
		if len(data) > maxControl || json.Unmarshal(data, &ctl) != nil {
			continue
		}
		if ctl.Resize != nil {
			select {
			case resize <- *ctl.Resize:
			default: // a burst of resizes: the latest that fits is enough
			}
		}
		if ctl.CloseIn && stdin != nil {
			stdin.Close()
			stdin = nil
		}
	}
}

func finishExec(ctx context.Context, c *websocket.Conn, code int, err error) {
	var ctl api.Control
	if err != nil {
		e, _ := api.ErrorOf(err)
		ctl.Error = &e
	} else {
		ctl.ExitCode = &code
	}
	b, _ := json.Marshal(ctl)
	_ = c.Write(ctx, websocket.MessageText, b)
	c.Close(websocket.StatusNormalClosure, "")
}

// wsWriter sends output as binary messages prefixed with its stream id
// (coder/websocket's Conn takes concurrent writes, one message each).
type wsWriter struct {
	ctx    context.Context
	c      *websocket.Conn
	stream byte
}

func (w *wsWriter) Write(p []byte) (int, error) {
	msg := make([]byte, 1+len(p))
	msg[0] = w.stream
	copy(msg[1:], p)
	if err := w.c.Write(w.ctx, websocket.MessageBinary, msg); err != nil {
		return 0, err
	}
	return len(p), nil
}
