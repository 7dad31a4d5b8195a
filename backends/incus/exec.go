package incus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/coder/websocket"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Exec runs a command beside the main process through Incus's exec API:
// cornus's helper inside the container (the init binary) takes on the
// container's environment, user, working directory and confinement, then
// becomes the command. Streams go over the operation's websockets;
// a TTY is sized through its control websocket.
func (b *Backend) Exec(ctx context.Context, id string, o backends.ExecOptions) (int, error) {
	in, err := b.find(ctx, id)
	if err != nil {
		return -1, fmt.Errorf("exec in container %s: %w", id, err)
	}
	if in.Status != "Running" {
		return -1, fmt.Errorf("exec in container %s: container is not running: %w", id, errdefs.ErrConflict)
	}
	if len(o.Cmd) == 0 {
		return -1, fmt.Errorf("exec in container %s: no command: %w", id, errdefs.ErrInvalidArgument)
	}
	req := helperRequest{Op: "exec", Cmd: o.Cmd, Env: o.Env, User: o.User, WorkingDir: o.WorkingDir, Privileged: o.Privileged}
	return b.runHelper(ctx, in, req, streams{stdin: o.Stdin, stdout: o.Stdout, stderr: o.Stderr, tty: o.TTY, size: o.Size, resize: o.Resize, started: o.Started})
}

// streams are a helper run's stdio.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	tty            bool
	size           *backends.TermSize
	resize         <-chan backends.TermSize
	started        func(string)
}

// runHelper runs the helper in a running container and returns its exit
// code.
func (b *Backend) runHelper(ctx context.Context, in instance, req helperRequest, s streams) (int, error) {
	if in.Config[keyDir] == "" {
		if req.Op != "exec" {
			return -1, fmt.Errorf("container %s: copying files in and out needs cornus's helper, which Incus's OCI containers lack; use a bind mount or exec with tar: %w", in.Name, errdefs.ErrNotImplemented)
		}
		return b.execPlain(ctx, in, req, s)
	}
	if s.tty {
		req.TTY = true
		if s.size != nil {
			req.Width, req.Height = int(s.size.Width), int(s.size.Height)
		}
		req.Env = append([]string{"TERM=xterm"}, req.Env...)
	}
	data, err := json.Marshal(req)
	if err != nil {
		return -1, err
	}
	init, err := initPathOf(in)
	if err != nil {
		return -1, err
	}
	// A terminal is the helper's own (runOnTerminal): Incus's interactive
	// exec would not end before the client's input does. Later resizes
	// are not relayed to it.
	post := execPost{
		Command:          []string{init, "monitor", HelperName, in.Name},
		Environment:      map[string]string{helperEnv: string(data)},
		WaitForWebsocket: true,
	}
	plain := s
	plain.tty, plain.resize = false, nil
	return b.execOp(ctx, in.Name, post, plain)
}

// initPathOf is the init binary an instance runs (its helper is the same
// binary).
func initPathOf(in instance) (string, error) {
	for _, line := range splitLines(in.Config["raw.lxc"]) {
		var path string
		if _, err := fmt.Sscanf(line, "lxc.init.cmd = %s", &path); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("container %s: no cornus init in its configuration: %w", in.Name, errdefs.ErrFailedPrecondition)
}

// execOp starts an exec operation, wires its websockets to s and returns
// the exit code. An operation that ended before its websockets connected
// (Incus gives them 10 s; a loaded host) never ran its command: it is
// started again.
func (b *Backend) execOp(ctx context.Context, name string, post execPost, s streams) (int, error) {
	for attempt := 1; ; attempt++ {
		code, err := b.execOnce(ctx, name, post, s)
		if !errors.Is(err, errOperationGone) || attempt == 3 || ctx.Err() != nil {
			return code, err
		}
	}
}

func (b *Backend) execOnce(ctx context.Context, name string, post execPost, s streams) (int, error) {
	op, err := b.cli.start(ctx, request{method: "POST", path: instancePath(name) + "/exec", body: post})
	if err != nil {
		return -1, fmt.Errorf("exec in container %s: %w", name, err)
	}
	var meta execMetadata
	if err := json.Unmarshal(op.Metadata, &meta); err != nil || meta.Fds["control"] == "" {
		return -1, fmt.Errorf("exec in container %s: incus sent no websockets: %w", name, errdefs.ErrUnknown)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conns, err := b.dialExec(wctx, op.ID, meta.Fds, post.Interactive)
	defer func() {
		for _, c := range conns {
			_ = c.CloseNow() // cleanup: the exec's outcome is already known
		}
	}()
	if err != nil {
		return -1, fmt.Errorf("exec in container %s: %w", name, err)
	}
	if s.started != nil {
		s.started(op.ID)
	}
	if control := conns["control"]; control != nil {
		serveControl(wctx, control, s.resize)
	}
	var outputs sync.WaitGroup
	stdout, stderr := s.stdout, s.stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil || s.tty {
		stderr = stdout
	}
	if s.tty {
		outputs.Go(func() { copyFromWS(wctx, conns["0"], stdout) })
	} else {
		outputs.Go(func() { copyFromWS(wctx, conns["1"], stdout) })
		outputs.Go(func() { copyFromWS(wctx, conns["2"], stderr) })
	}
	go copyToWS(wctx, conns["0"], s.stdin, !s.tty)
	done, err := b.cli.wait(ctx, op.ID)
	if err != nil {
		return -1, fmt.Errorf("exec in container %s: %w", name, err)
	}
	outputs.Wait()
	var res execMetadata
	if err := json.Unmarshal(done.Metadata, &res); err != nil || res.Return == nil {
		return -1, fmt.Errorf("exec in container %s: incus reported no exit code: %w", name, errdefs.ErrUnknown)
	}
	return *res.Return, nil
}

// serveControl sends the TTY's resizes on an exec's control websocket and
// keeps it read (pings) until ctx ends.
func serveControl(ctx context.Context, control *websocket.Conn, resize <-chan backends.TermSize) {
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case sz, ok := <-resize:
				if !ok {
					return
				}
				msg, _ := json.Marshal(map[string]any{"command": "window-resize", "args": map[string]string{
					"width": strconv.Itoa(int(sz.Width)), "height": strconv.Itoa(int(sz.Height))}})
				_ = control.Write(ctx, websocket.MessageText, msg)
			}
		}
	}()
	go func() {
		for {
			if _, _, err := control.Read(ctx); err != nil {
				return
			}
		}
	}()
}

// dialExec connects an exec operation's websockets, all at once: Incus
// fails the exec when they are not all connected within 10 s, and dials
// one after another on a loaded host took longer. It returns what it
// connected, also on error. The error is errOperationGone only when a
// websocket the command waits for (all but control, unless interactive)
// could not be connected because the operation ended: the command then
// never ran.
func (b *Backend) dialExec(ctx context.Context, opID string, fds map[string]string, interactive bool) (map[string]*websocket.Conn, error) {
	type dialed struct {
		fd   string
		conn *websocket.Conn
		err  error
	}
	results := make(chan dialed, 4)
	n := 0
	for _, fd := range []string{"control", "0", "1", "2"} {
		if secret, ok := fds[fd]; ok {
			n++
			go func() {
				c, err := b.cli.websocket(ctx, opID, secret)
				results <- dialed{fd, c, err}
			}()
		}
	}
	conns := map[string]*websocket.Conn{}
	var gone, other error
	for range n {
		d := <-results
		switch {
		case d.err == nil:
			conns[d.fd] = d.conn
		case errors.Is(d.err, errOperationGone) && (d.fd != "control" || interactive):
			gone = d.err
		case errors.Is(d.err, errOperationGone):
			// A command that needs no control websocket started once its
			// data websockets were connected, and a short one can end
			// before the control one is: its output and exit code are
			// still there (resizes and pings need control; only a TTY,
			// which is interactive, has them).
		case other != nil:
		default:
			other = fmt.Errorf("%s websocket: %w", d.fd, d.err)
		}
	}
	if gone != nil {
		return conns, gone
	}
	return conns, other
}

// copyFromWS copies a websocket's messages to w until it closes.
func copyFromWS(ctx context.Context, c *websocket.Conn, w io.Writer) {
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		if len(data) == 0 {
			continue
		}
		if _, err := w.Write(data); err != nil {
			return
		}
	}
}

// copyToWS sends r's bytes as binary messages; at its end it tells Incus
// the input ended (an empty message, then a close for a plain stdin).
func copyToWS(ctx context.Context, c *websocket.Conn, r io.Reader, closeAtEOF bool) {
	if r != nil {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if werr := c.Write(ctx, websocket.MessageBinary, buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					return
				}
				break
			}
		}
	}
	if !closeAtEOF {
		_ = c.Write(ctx, websocket.MessageText, []byte{})
		return
	}
	if closeAtEOF {
		_ = c.Write(ctx, websocket.MessageText, []byte{})
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
