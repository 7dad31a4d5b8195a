package containerd

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"

	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// RunMonitor is the body of `cornus monitor containerd ID`: it supervises
// the container (daemonless.Core.Supervise: the monitor and DNS on its
// networks' gateways) through its task, which the monitor process keeps
// the stdio FIFOs of.
func RunMonitor(ctx context.Context, environ []string, id string) error {
	b, err := New(ctx, WithEnviron(environ), func(o *options) { o.monitor = true })
	if err != nil {
		return err
	}
	defer b.Close()
	task, err := b.MonitorTask(ctx, id)
	if err != nil {
		return err
	}
	return b.Supervise(ctx, id, task)
}

// MonitorTask is the container as its monitor drives it. It runs in the
// detached `cornus monitor containerd ID` process, which keeps the task's
// stdio FIFOs open for as long as it supervises.
func (b *Backend) MonitorTask(ctx context.Context, id string) (monitor.Task, error) {
	ctr, err := b.cli.LoadContainer(b.ns(ctx), id)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", id, err)
	}
	st, err := b.Store().Read(id)
	if err != nil {
		return nil, err
	}
	return &monitorTask{b: b, ctr: ctr, tty: st.Spec.TTY}, nil
}

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
	return t.b.execIn(ctx, t.ctr, task, daemonless.ExecRequest{Cmd: cmd, Stdout: out, Stderr: out})
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
