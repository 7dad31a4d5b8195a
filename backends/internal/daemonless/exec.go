package daemonless

import (
	"context"
	"io"
	"sync"

	"github.com/cornus-dev/cornus/backends"
)

// ExecRequest is one process to run in a running container.
type ExecRequest struct {
	Cmd        []string
	Env        []string
	User, Cwd  string
	TTY        bool
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer        // Stdout with TTY or when the caller gave none
	Resize     <-chan [2]uint32 // height, width; the first, if sent, is the start size
	Started    func(execID string)
	Privileged bool
}

// Exec runs a process in the running container (the runtime's Exec).
func (c *Core) Exec(ctx context.Context, id string, o backends.ExecOptions) (int, error) {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return -1, err
	}
	var resize chan [2]uint32
	if o.Resize != nil || o.Size != nil {
		resize = make(chan [2]uint32, 1)
		if o.Size != nil {
			resize <- [2]uint32{uint32(o.Size.Height), uint32(o.Size.Width)}
		}
		if o.Resize != nil {
			go func() {
				defer close(resize)
				for sz := range o.Resize {
					resize <- [2]uint32{uint32(sz.Height), uint32(sz.Width)}
				}
			}()
		}
	}
	stderr := o.Stderr
	if stderr == nil || o.TTY {
		stderr = o.Stdout
	}
	return c.rt.Exec(ctx, st, ExecRequest{Cmd: o.Cmd, Env: o.Env, User: o.User, Cwd: o.WorkingDir, TTY: o.TTY,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: stderr, Resize: resize, Started: o.Started, Privileged: o.Privileged})
}

// Serialized wraps the two output writers so two copies never write
// concurrently: callers often pass one writer for both (a bytes.Buffer,
// whose ReadFrom two goroutines would corrupt).
func Serialized(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	var mu sync.Mutex
	wrap := func(w io.Writer) io.Writer {
		if w == nil {
			return nil
		}
		return &lockedWriter{mu: &mu, w: w}
	}
	return wrap(stdout), wrap(stderr)
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
