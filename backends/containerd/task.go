package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs/pkg/errgrpc"

	"github.com/cornus-dev/cornus/backends/internal/monitor"

	"github.com/cornus-dev/cornus/backends/internal/ocispec"
)

// MonitorTask is the container as its monitor drives it. It runs in the
// detached `cornus monitor containerd ID` process, which keeps the task's
// stdio FIFOs open for as long as it supervises.
func (b *Backend) MonitorTask(ctx context.Context, id string) (monitor.Task, error) {
	ctr, err := b.cli.LoadContainer(b.ns(ctx), id)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", id, err)
	}
	st, err := b.store().Read(id)
	if err != nil {
		return nil, err
	}
	return &monitorTask{b: b, ctr: ctr, tty: st.Spec.TTY}, nil
}

// Records is the store of monitor records, for the monitor subcommand.
func (b *Backend) Records() *monitor.Store { return b.records }

type monitorTask struct {
	b   *Backend
	ctr client.Container
	tty bool
}

func (t *monitorTask) Start(ctx context.Context, stdio monitor.Stdio) (monitor.Process, error) {
	ctx = t.b.ns(ctx)
	// A task left by the previous run (an exit, a crash) goes first.
	if old, err := t.ctr.Task(ctx, nil); err == nil {
		_, _ = old.Delete(ctx, client.WithProcessKill)
	}
	stdin := stdio.Stdin
	var stdinDone chan struct{}
	if stdin != nil {
		stdinDone = make(chan struct{})
		stdin = &eofNotifier{r: stdin, done: stdinDone}
	}
	opts := []cio.Opt{cio.WithStreams(stdin, stdio.Stdout, stdio.Stderr), cio.WithFIFODir(t.b.cfg.fifoDir())}
	if t.tty {
		opts = append(opts, cio.WithTerminal)
	}
	task, err := t.ctr.NewTask(ctx, cio.NewCreator(opts...))
	if err != nil {
		return nil, fmt.Errorf("create task: %w", err)
	}
	exit, err := task.Wait(ctx)
	if err != nil {
		_, _ = task.Delete(ctx, client.WithProcessKill)
		return nil, fmt.Errorf("wait task: %w", err)
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(ctx, client.WithProcessKill)
		return nil, fmt.Errorf("start task: %w", err)
	}
	if stdinDone != nil {
		// The monitor closed the container's stdin (StdinOnce): the shim
		// passes that on only when told.
		// (The monitor closes the pipe at the end of every run too, so
		// this goroutine always ends.)
		go func() {
			<-stdinDone
			_ = task.CloseIO(context.WithoutCancel(ctx), client.WithStdinCloser)
		}()
	}
	return &process{task: task, exit: exit}, nil
}

func (t *monitorTask) Exec(ctx context.Context, cmd []string, out io.Writer) (int, error) {
	ctx = t.b.ns(ctx)
	task, err := t.ctr.Task(ctx, nil)
	if err != nil {
		return -1, err
	}
	return t.b.execIn(ctx, t.ctr, task, execRequest{cmd: cmd, stdout: out, stderr: out})
}

// process is a started containerd task.
type process struct {
	task client.Task
	exit <-chan client.ExitStatus
}

func (p *process) Pid() int { return int(p.task.Pid()) }

func (p *process) Resize(width, height uint32) error {
	return p.task.Resize(context.Background(), width, height)
}

func (p *process) Signal(sig syscall.Signal) error {
	return p.task.Kill(context.Background(), sig)
}

// lostTaskPatience is how long a monitor keeps asking a containerd that
// went away (restarted) for its task before it gives the task up as lost.
const lostTaskPatience = 2 * time.Minute

func (p *process) Wait(ctx context.Context) (monitor.Exit, error) {
	select {
	case st := <-p.exit:
		code, _, err := st.Result()
		if err != nil {
			// containerd went away: the task runs on under its shim, and
			// a restarted containerd knows it again. Wait anew.
			if p.rewait(ctx) == nil {
				return p.Wait(ctx)
			}
			return monitor.Exit{}, fmt.Errorf("lost the task: %w", err)
		}
		if io := p.task.IO(); io != nil {
			io.Wait()
		}
		_, _ = p.task.Delete(context.WithoutCancel(ctx))
		return monitor.Exit{Code: int(code)}, nil
	case <-ctx.Done():
		return monitor.Exit{}, ctx.Err()
	}
}

// rewait subscribes to the task's exit again, retrying while containerd
// is away.
func (p *process) rewait(ctx context.Context) error {
	deadline := time.Now().Add(lostTaskPatience)
	for {
		exit, err := p.task.Wait(ctx)
		if err == nil {
			p.exit = exit
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// execRequest is one process to run in a task.
type execRequest struct {
	cmd        []string
	env        []string
	user, cwd  string
	tty        bool
	stdin      io.Reader
	stdout     io.Writer
	stderr     io.Writer
	resize     <-chan [2]uint32
	started    func(string)
	privileged bool
}

// execIn runs a process in a running task and returns its exit code.
func (b *Backend) execIn(ctx context.Context, ctr client.Container, task client.Task, r execRequest) (int, error) {
	spec, err := ctr.Spec(ctx)
	if err != nil {
		return -1, err
	}
	p := *spec.Process
	p.Args, p.Terminal = r.cmd, r.tty
	p.Env = append(append([]string{}, p.Env...), r.env...)
	if r.cwd != "" {
		p.Cwd = r.cwd
	}
	if r.user != "" {
		uid, gid, err := lookupUser(task, r.user)
		if err != nil {
			return -1, err
		}
		p.User.UID, p.User.GID, p.User.AdditionalGids = uid, gid, nil
	}
	if r.privileged {
		if err := ocispec.PrivilegedExec(&p); err != nil {
			return -1, err
		}
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	execID := "exec-" + hex.EncodeToString(id)
	stdin := r.stdin
	var stdinDone chan struct{}
	if stdin != nil {
		stdinDone = make(chan struct{})
		stdin = &eofNotifier{r: stdin, done: stdinDone}
	}
	stdout, stderr := serialized(r.stdout, r.stderr)
	opts := []cio.Opt{cio.WithStreams(stdin, stdout, stderr), cio.WithFIFODir(b.cfg.fifoDir())}
	if r.tty {
		opts = append(opts, cio.WithTerminal)
	}
	proc, err := task.Exec(ctx, execID, &p, cio.NewCreator(opts...))
	if err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	deleted := false
	defer func() {
		if !deleted {
			_, _ = proc.Delete(context.WithoutCancel(ctx), client.WithProcessKill)
		}
	}()
	exit, err := proc.Wait(ctx)
	if err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	if err := proc.Start(ctx); err != nil {
		return -1, fmt.Errorf("exec %v: %w", r.cmd, err)
	}
	if r.started != nil {
		r.started(execID)
	}
	if r.resize != nil {
		go func() {
			for sz := range r.resize {
				_ = proc.Resize(ctx, sz[1], sz[0])
			}
		}()
	}
	if stdinDone != nil {
		// Closing our end of the stdin FIFO does not end the process's
		// stdin: the shim closes it when told.
		go func() {
			select {
			case <-stdinDone:
				_ = proc.CloseIO(context.WithoutCancel(ctx), client.WithStdinCloser)
			case <-ctx.Done():
			}
		}()
	}
	select {
	case st := <-exit:
		code, _, err := st.Result()
		if err != nil {
			return -1, fmt.Errorf("exec: %w", err)
		}
		deleted = true
		if err := b.deleteExec(context.WithoutCancel(ctx), task.ID(), proc); err != nil {
			return int(code), fmt.Errorf("exec: %w", err)
		}
		return int(code), nil
	case <-ctx.Done():
		_ = proc.Kill(context.WithoutCancel(ctx), syscall.SIGKILL)
		return -1, ctx.Err()
	}
}

// eofNotifier closes done when its reader ends.
type eofNotifier struct {
	r    io.Reader
	done chan struct{}
	once bool
}

func (e *eofNotifier) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !e.once {
		e.once = true
		close(e.done)
	}
	return n, err
}

// serialized wraps the two output writers so the two copy goroutines cio
// runs never write concurrently: callers often pass one writer for both
// (a bytes.Buffer, whose ReadFrom two goroutines would corrupt).
func serialized(stdout, stderr io.Writer) (io.Writer, io.Writer) {
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

// deleteExec deletes an exited exec process and waits for its output. The
// shim finishes copying the process's output into the FIFOs and closes
// them when the process is deleted, not when it exits; the client's own
// Process.Delete then closes our read ends at once, losing what is still
// in the FIFO buffers (an exec's output, cut short under load). Here the
// copies run to EOF first, bounded in case the shim never closes.
func (b *Backend) deleteExec(ctx context.Context, taskID string, proc client.Process) error {
	_, err := b.cli.TaskService().DeleteProcess(ctx, &tasks.DeleteProcessRequest{ContainerID: taskID, ExecID: proc.ID()})
	if pio := proc.IO(); pio != nil {
		if err != nil {
			pio.Cancel() // the shim may never close its ends
		}
		done := make(chan struct{})
		go func() { pio.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(execDrainWait):
			pio.Cancel()
			<-done
		}
		pio.Close()
	}
	if err != nil {
		return errgrpc.ToNative(err)
	}
	return nil
}

// execDrainWait bounds the wait for an exec's output after its delete.
const execDrainWait = 10 * time.Second
