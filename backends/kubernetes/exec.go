package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream" //nolint:staticcheck // client-go v0.37 (transport/spdy, tools/portforward) still uses these types and errors; k8s.io/streaming is only indirect
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/cornus-dev/cornus/backends"
)

// Exec runs a process in the running container through the pod's exec
// subresource (websocket, else SPDY) and returns its exit code. The API
// takes only a command: an environment, a working directory or another
// user are applied by wrapping it (env, sh -c 'cd', su), which needs
// those tools in the image.
func (b *Backend) Exec(ctx context.Context, id string, o backends.ExecOptions) (int, error) {
	c, err := b.find(ctx, id)
	if err != nil {
		return -1, err
	}
	return b.execIn(ctx, c, o)
}

func (b *Backend) execIn(ctx context.Context, c container, o backends.ExecOptions) (int, error) {
	if c.pod == nil || stateOf(c.pod).state != backends.StateRunning {
		return -1, fmt.Errorf("exec in %s: the container is not running: %w", c.rec.Name, errdefs.ErrConflict)
	}
	if o.Privileged {
		return -1, notImplementedf("exec in %s: a privileged exec (the pod's processes have the container's privileges)", c.rec.Name)
	}
	if len(o.Cmd) == 0 {
		return -1, fmt.Errorf("exec in %s: no command: %w", c.rec.Name, errdefs.ErrInvalidArgument)
	}
	cmd := wrapExec(o, c.rec.Config.User)
	opts := &corev1.PodExecOptions{
		Container: c.rec.Pod.Containers[0].Name, Command: cmd,
		Stdin: o.Stdin != nil, Stdout: o.Stdout != nil, Stderr: o.Stderr != nil && !o.TTY, TTY: o.TTY,
	}
	req := b.core.RESTClient().Post().Namespace(b.cfg.namespace).Resource("pods").Name(c.obj()).SubResource("exec").
		VersionedParams(opts, b.params)
	ex, err := b.executor(req)
	if err != nil {
		return -1, fmt.Errorf("exec in %s: %w", c.rec.Name, err)
	}
	if o.Started != nil {
		o.Started(newID())
	}
	so := remotecommand.StreamOptions{Stdin: o.Stdin, Stdout: o.Stdout, Tty: o.TTY}
	if opts.Stderr {
		so.Stdout, so.Stderr = serialized(o.Stdout, o.Stderr)
	}
	if o.TTY && (o.Size != nil || o.Resize != nil) {
		so.TerminalSizeQueue = newSizeQueue(ctx, o.Size, o.Resize)
	}
	err = ex.StreamWithContext(ctx, so)
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		return exit.ExitStatus(), nil
	case ctx.Err() != nil:
		return -1, ctx.Err()
	}
	return -1, fmt.Errorf("exec in %s: %w", c.rec.Name, translate(err))
}

// wrapExec applies what the exec API cannot express to the command.
func wrapExec(o backends.ExecOptions, containerUser string) []string {
	cmd := o.Cmd
	if o.WorkingDir != "" {
		cmd = append([]string{"/bin/sh", "-c", `cd "$0" && exec "$@"`, o.WorkingDir}, cmd...)
	}
	if len(o.Env) > 0 {
		cmd = append(append([]string{"env"}, o.Env...), cmd...)
	}
	asRoot := o.User == "root" || o.User == "0"
	if o.User != "" && o.User != containerUser && !(containerUser == "" && asRoot) {
		// Options before "--": su's getopt permutes, so a "-c" of the
		// command after the user would replace su's own.
		cmd = append([]string{"su", "-s", "/bin/sh", "-c", `exec "$0" "$@"`, "--", o.User}, cmd...)
	}
	return cmd
}

// executor streams a pod subresource (exec, attach): websocket first,
// SPDY for servers that do not upgrade to it.
func (b *Backend) executor(req *rest.Request) (remotecommand.Executor, error) {
	spdy, err := remotecommand.NewSPDYExecutor(b.rest, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(b.rest, "GET", req.URL().String())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// sizeQueue feeds terminal sizes to a stream: the initial one, then each
// resize until ctx ends.
type sizeQueue struct {
	ctx     context.Context
	first   *backends.TermSize
	resize  <-chan backends.TermSize
	started sync.Once
}

func newSizeQueue(ctx context.Context, first *backends.TermSize, resize <-chan backends.TermSize) *sizeQueue {
	return &sizeQueue{ctx: ctx, first: first, resize: resize}
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	var out *remotecommand.TerminalSize
	q.started.Do(func() {
		if q.first != nil {
			out = &remotecommand.TerminalSize{Width: uint16(q.first.Width), Height: uint16(q.first.Height)}
		}
	})
	if out != nil {
		return out
	}
	select {
	case <-q.ctx.Done():
		return nil
	case s, ok := <-q.resize:
		if !ok {
			<-q.ctx.Done()
			return nil
		}
		return &remotecommand.TerminalSize{Width: uint16(s.Width), Height: uint16(s.Height)}
	}
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(e.eof)
	}
	return n, err
}

// serialized makes the two writers safe to write from the two goroutines
// that copy a stream's stdout and stderr (callers often pass one buffer
// for both).
func serialized(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	var mu sync.Mutex
	return &lockedWriter{mu: &mu, w: stdout}, &lockedWriter{mu: &mu, w: stderr}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
