package containerd

import (
	"context"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/daemonless"
)

// driver is the backend's daemonless.Runtime: containerd's containers and
// their tasks. Create's part is create.go, exec's exec.go.
type driver struct{ b *Backend }

var _ daemonless.Runtime = driver{}

// task is the container's live task.
func (d driver) task(ctx context.Context, id string) (client.Container, client.Task, error) {
	ctr, err := d.b.cli.LoadContainer(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	task, err := ctr.Task(ctx, nil)
	return ctr, task, err
}

func (d driver) InitPid(ctx context.Context, id string) (int, error) {
	_, task, err := d.task(d.b.ns(ctx), id)
	if err != nil {
		return 0, err
	}
	return int(task.Pid()), nil
}

func (d driver) Pids(ctx context.Context, id string) ([]int, error) {
	ctx = d.b.ns(ctx)
	_, task, err := d.task(ctx, id)
	if err != nil {
		return nil, err
	}
	ps, err := task.Pids(ctx)
	if err != nil {
		return nil, err
	}
	pids := make([]int, len(ps))
	for i, p := range ps {
		pids[i] = int(p.Pid)
	}
	return pids, nil
}

func (d driver) Pause(ctx context.Context, id string) error {
	ctx = d.b.ns(ctx)
	_, task, err := d.task(ctx, id)
	if err != nil {
		return err
	}
	return task.Pause(ctx)
}

func (d driver) Resume(ctx context.Context, id string) error {
	ctx = d.b.ns(ctx)
	_, task, err := d.task(ctx, id)
	if err != nil {
		return err
	}
	return task.Resume(ctx)
}

// KillOrphan SIGKILLs the task whose monitor is gone and deletes it; its
// code is its exit status, or 137 when containerd gave none.
func (d driver) KillOrphan(ctx context.Context, id string) (int, error) {
	ctx = d.b.ns(ctx)
	ctr, err := d.b.cli.LoadContainer(ctx, id)
	if err != nil {
		return 0, err
	}
	code := 137
	if task, err := ctr.Task(ctx, nil); err == nil {
		if exit, err := task.Wait(ctx); err == nil {
			_ = task.Kill(ctx, syscall.SIGKILL)
			select {
			case st := <-exit:
				if c, _, err := st.Result(); err == nil {
					code = int(c)
				}
			case <-time.After(10 * time.Second):
			}
		}
		_, _ = task.Delete(ctx, client.WithProcessKill)
	}
	return code, nil
}

// Delete removes the containerd container, its task and its snapshot.
func (d driver) Delete(ctx context.Context, id string) error {
	ctx = d.b.ns(ctx)
	ctr, err := d.b.cli.LoadContainer(ctx, id)
	if err != nil {
		return nil
	}
	if task, err := ctr.Task(ctx, nil); err == nil {
		_, _ = task.Delete(ctx, client.WithProcessKill)
	}
	if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}

// Rename sets the container's name label.
func (d driver) Rename(ctx context.Context, id, name string) error {
	ctx = d.b.ns(ctx)
	ctr, err := d.b.cli.LoadContainer(ctx, id)
	if err != nil {
		return err
	}
	_, err = ctr.SetLabels(ctx, map[string]string{labelName: name})
	return err
}
