package bare

import (
	"context"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/daemonless"
)

// driver is the backend's daemonless.Runtime: the OCI runtime's
// containers (runtime.go) and their bundles. Create's part is create.go,
// exec's exec.go.
type driver struct{ b *Backend }

var _ daemonless.Runtime = driver{}

func (d driver) InitPid(ctx context.Context, id string) (int, error) {
	rs, err := d.b.rt.state(ctx, id)
	if err != nil {
		return 0, err
	}
	if rs.Status != "running" && rs.Status != "paused" {
		return 0, nil
	}
	return rs.Pid, nil
}

func (d driver) Pids(ctx context.Context, id string) ([]int, error) { return d.b.rt.pids(ctx, id) }

func (d driver) Pause(ctx context.Context, id string) error {
	_, err := d.b.rt.run(ctx, "pause", id)
	return err
}

func (d driver) Resume(ctx context.Context, id string) error {
	_, err := d.b.rt.run(ctx, "resume", id)
	return err
}

// KillOrphan SIGKILLs a container whose monitor is gone and deletes it
// from the runtime. Its exit status went with its parent, the monitor:
// 137 is what a kill leaves.
func (d driver) KillOrphan(ctx context.Context, id string) (int, error) {
	rt := d.b.rt
	if err := rt.kill(ctx, id, int(syscall.SIGKILL), true); err != nil && !isNotFound(err) && !errdefs.IsConflict(err) {
		return 0, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		rs, err := rt.state(ctx, id)
		if err != nil || rs.Status == "stopped" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rt.delete(ctx, id); err != nil {
		return 0, err
	}
	return 137, nil
}

// Delete removes the runtime's container and unmounts the container's
// root (its upper directory goes with the container's directory).
func (d driver) Delete(ctx context.Context, id string) error {
	if err := d.b.rt.delete(ctx, id); err != nil {
		return err
	}
	return unmount(d.b.cfg.rootfsDir(id))
}

// Rename has nothing to tell the runtime: the name lives in
// container.json only.
func (d driver) Rename(context.Context, string, string) error { return nil }
