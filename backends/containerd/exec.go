package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs/pkg/errgrpc"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/backends/internal/records"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
)

// Exec runs a process in the container's running task.
func (d driver) Exec(ctx context.Context, st records.Container, r daemonless.ExecRequest) (int, error) {
	ctx = d.b.ns(ctx)
	ctr, task, err := d.task(ctx, st.ID)
	if ctr == nil {
		return -1, err
	}
	if err != nil {
		return -1, daemonless.NotRunning(st.Name)
	}
	return d.b.execIn(ctx, ctr, task, r)
}

// execIn runs a process in a running task and returns its exit code.
func (b *Backend) execIn(ctx context.Context, ctr client.Container, task client.Task, r daemonless.ExecRequest) (int, error) {
	p, err := execProcess(ctx, ctr, task, r)
	if err != nil {
		return -1, err
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	execID := "exec-" + hex.EncodeToString(id)
	stdin := r.Stdin
	var stdinDone chan struct{}
	if stdin != nil {
		stdinDone = make(chan struct{})
		stdin = &eofNotifier{r: stdin, done: stdinDone}
	}
	stdout, stderr := daemonless.Serialized(r.Stdout, r.Stderr)
	opts := []cio.Opt{cio.WithStreams(stdin, stdout, stderr), cio.WithFIFODir(b.cfg.fifoDir())}
	if r.TTY {
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
		return -1, fmt.Errorf("exec %v: %w", r.Cmd, err)
	}
	if r.Started != nil {
		r.Started(execID)
	}
	if r.Resize != nil {
		go func() {
			for sz := range r.Resize {
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

// execProcess is the exec's OCI process: the container's, with the
// request's arguments, environment, directory, user and terminal.
func execProcess(ctx context.Context, ctr client.Container, task client.Task, r daemonless.ExecRequest) (specs.Process, error) {
	spec, err := ctr.Spec(ctx)
	if err != nil {
		return specs.Process{}, err
	}
	p := *spec.Process
	p.Args, p.Terminal = r.Cmd, r.TTY
	p.Env = append(append([]string{}, p.Env...), r.Env...)
	if r.Cwd != "" {
		p.Cwd = r.Cwd
	}
	if r.User != "" {
		uid, gid, err := lookupUser(task, r.User)
		if err != nil {
			return p, err
		}
		p.User.UID, p.User.GID, p.User.AdditionalGids = uid, gid, nil
	}
	if r.Privileged {
		if err := ocispec.PrivilegedExec(&p); err != nil {
			return p, err
		}
	}
	return p, nil
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

// lookupUser resolves a user ("name", "uid", "uid:gid", "name:group") the
// way the running container's own /etc/passwd and /etc/group say.
func lookupUser(task client.Task, user string) (uint32, uint32, error) {
	root, err := rootfs.Open(fmt.Sprintf("/proc/%d/root", task.Pid()))
	if err != nil {
		return 0, 0, err
	}
	defer root.Close()
	u, err := root.LookupUser(user)
	return u.UID, u.GID, err
}
