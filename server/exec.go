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

// maxControl bounds a control message on an exec WebSocket.
const maxControl = 64 << 10

// exec is GET /v1/projects/{project}/exec: a WebSocket carrying one exec
// (stdioConn), started by an api.ExecStart.
func (s *Server) exec(w http.ResponseWriter, r *http.Request, id identity) {
	var start api.ExecStart
	sc, ok := acceptStdio(w, r, &start, "an exec start")
	if !ok {
		return
	}
	defer sc.close()
	o := engine.ExecOptions{Service: start.Service, Index: start.Index, ExecOptions: backends.ExecOptions{
		Cmd: start.Cmd, Env: start.Env, User: start.User, WorkingDir: start.WorkingDir, TTY: start.TTY,
		Privileged: start.Privileged, Stdout: sc.out, Stderr: sc.err, Size: start.Size,
	}}
	if start.AgentSession != "" {
		sock, done, err := s.forwardAgent(execReplica{ctx: sc.ctx, project: r.PathValue("project"), service: start.Service, index: start.Index}, id.tenant, start.AgentSession)
		if err != nil {
			sc.finish(api.Control{}, err)
			return
		}
		defer done()
		o.Env = append(slices.Clone(o.Env), "SSH_AUTH_SOCK="+sock)
	}
	o.Stdin, o.Resize = sc.feed(start.Stdin, start.TTY)
	code, err := s.e.Exec(sc.ctx, r.PathValue("project"), o)
	sc.finish(api.Control{ExitCode: &code}, err)
}

// stdioConn is a WebSocket carrying one process's stdio (exec, run). The
// client's first text message starts it; then binary messages are stdin
// and text ones api.Control (resize, end of stdin). The server sends
// output as binary messages prefixed with the stream id and ends with a
// Control holding the exit code or the error.
type stdioConn struct {
	ctx      context.Context
	cancel   context.CancelFunc
	c        *websocket.Conn
	out, err io.Writer
}

// acceptStdio accepts the WebSocket and reads its start message into
// start (what names it, for the refusal); false: it is over already.
func acceptStdio(w http.ResponseWriter, r *http.Request, start any, what string) (*stdioConn, bool) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, false
	}
	c.SetReadLimit(maxSpecBody)
	ctx, cancel := context.WithCancel(r.Context())
	sc := &stdioConn{ctx: ctx, cancel: cancel, c: c,
		out: &wsWriter{ctx: ctx, c: c, stream: api.StreamStdout}, err: &wsWriter{ctx: ctx, c: c, stream: api.StreamStderr}}
	typ, data, err := c.Read(ctx)
	if err != nil {
		sc.close()
		return nil, false
	}
	if typ != websocket.MessageText || json.Unmarshal(data, start) != nil {
		sc.finish(api.Control{}, fmt.Errorf("%w: the first message must be %s", errdefs.ErrInvalidArgument, what))
		sc.close()
		return nil, false
	}
	c.SetReadLimit(1 << 20)
	return sc, true
}

// feed starts reading the client's stdin (when it sends one) and
// resizes (with a TTY) until the stream ends.
func (sc *stdioConn) feed(stdin, tty bool) (io.Reader, <-chan backends.TermSize) {
	var in io.Reader
	var w *io.PipeWriter
	if stdin {
		var pr *io.PipeReader
		pr, w = io.Pipe()
		in = pr
	}
	resize := make(chan backends.TermSize, 4)
	go readClient(sc.ctx, sc.c, w, resize)
	if !tty {
		return in, nil
	}
	return in, resize
}

// finish sends the last Control: ctl, or the error.
func (sc *stdioConn) finish(ctl api.Control, err error) {
	if err != nil {
		e, _ := api.ErrorOf(err)
		ctl = api.Control{Error: &e, Container: ctl.Container}
	}
	b, _ := json.Marshal(ctl)
	_ = sc.c.Write(sc.ctx, websocket.MessageText, b)
	sc.c.Close(websocket.StatusNormalClosure, "")
}

func (sc *stdioConn) close() {
	sc.cancel()
	_ = sc.c.CloseNow() // after a normal close, only says it is closed
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
