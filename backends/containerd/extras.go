package containerd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1/stats"
	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"
	"github.com/containerd/typeurl/v2"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
)

// runningTask is the container's live task.
func (b *Backend) runningTask(ctx context.Context, id string) (stored, client.Task, error) {
	ctx = b.ns(ctx)
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return st, nil, err
	}
	ctr, err := b.cli.LoadContainer(ctx, st.ID)
	if err != nil {
		return st, nil, err
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return st, nil, notRunning(st.Name)
	}
	return st, task, nil
}

// Pause freezes the container's processes.
func (b *Backend) Pause(ctx context.Context, id string) error {
	st, task, err := b.runningTask(ctx, id)
	if err != nil {
		return err
	}
	if err := task.Pause(b.ns(ctx)); err != nil {
		return fmt.Errorf("pause %s: %w", st.Name, err)
	}
	return b.setPaused(st, true)
}

// Unpause thaws them.
func (b *Backend) Unpause(ctx context.Context, id string) error {
	st, task, err := b.runningTask(ctx, id)
	if err != nil {
		return err
	}
	if err := task.Resume(b.ns(ctx)); err != nil {
		return fmt.Errorf("unpause %s: %w", st.Name, err)
	}
	return b.setPaused(st, false)
}

// setPaused records the freezer state where List and Inspect read it
// (asking containerd per container would make ps one call per row).
func (b *Backend) setPaused(st stored, paused bool) error {
	st.Paused = paused
	if err := b.store().Write(st); err != nil {
		return err
	}
	action := "unpause"
	if paused {
		action = "pause"
	}
	b.event(action, st)
	return nil
}

// Stats samples the task's cgroup (v1 metrics).
func (b *Backend) Stats(ctx context.Context, id string) (backends.Stats, error) {
	_, task, err := b.runningTask(ctx, id)
	if err != nil {
		return backends.Stats{}, err
	}
	m, err := task.Metrics(b.ns(ctx))
	if err != nil {
		return backends.Stats{}, fmt.Errorf("stats: %w", err)
	}
	v, err := typeurl.UnmarshalAny(m.Data)
	if err != nil {
		return backends.Stats{}, fmt.Errorf("stats: %w", err)
	}
	s, ok := v.(*stats.Metrics)
	if !ok {
		return backends.Stats{}, fmt.Errorf("stats: metrics of type %T are not supported: %w", v, errdefs.ErrNotImplemented)
	}
	out := backends.Stats{Time: time.Now()}
	if c := s.GetCPU(); c != nil && c.GetUsage() != nil {
		out.CPUTotal = time.Duration(c.GetUsage().GetTotal())
	}
	if mem := s.GetMemory(); mem != nil && mem.GetUsage() != nil {
		out.MemoryUsage, out.MemoryLimit = mem.GetUsage().GetUsage(), mem.GetUsage().GetLimit()
	}
	if p := s.GetPids(); p != nil {
		out.Pids = p.GetCurrent()
	}
	for _, e := range s.GetBlkio().GetIoServiceBytesRecursive() {
		switch strings.ToLower(e.GetOp()) {
		case "read":
			out.BlockRead += e.GetValue()
		case "write":
			out.BlockWrite += e.GetValue()
		}
	}
	return out, nil
}

// Top lists the container's processes from /proc.
func (b *Backend) Top(ctx context.Context, id, psArgs string) (backends.Processes, error) {
	_, task, err := b.runningTask(ctx, id)
	if err != nil {
		return backends.Processes{}, err
	}
	pids, err := task.Pids(b.ns(ctx))
	if err != nil {
		return backends.Processes{}, err
	}
	out := backends.Processes{Titles: []string{"UID", "PID", "PPID", "CMD"}}
	for _, p := range pids {
		pid := strconv.Itoa(int(p.Pid))
		cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		status, _ := os.ReadFile("/proc/" + pid + "/status")
		uid, ppid := procField(status, "Uid:"), procField(status, "PPid:")
		out.Processes = append(out.Processes, []string{uid, pid, ppid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	return out, nil
}

func procField(status []byte, key string) string {
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}

// Rename changes the container's name.
func (b *Backend) Rename(ctx context.Context, id, name string) error {
	ctx = b.ns(ctx)
	if err := localstore.ValidName(name); err != nil {
		return err
	}
	st, err := b.store().Find(ctx, id)
	if err != nil {
		return err
	}
	if other, err := b.store().ByName(ctx, name); err == nil && other != st.ID {
		return fmt.Errorf("rename %s to %s: the name is in use: %w", st.Name, name, errdefs.ErrConflict)
	}
	ctr, err := b.cli.LoadContainer(ctx, st.ID)
	if err != nil {
		return err
	}
	if _, err := ctr.SetLabels(ctx, map[string]string{labelName: name}); err != nil {
		return fmt.Errorf("rename %s: %w", st.Name, err)
	}
	st.Name = name
	if err := b.store().Write(st); err != nil {
		return err
	}
	b.event("rename", st)
	return nil
}

// openRoot opens the container's root filesystem as its init sees it
// (/proc/<pid>/root, its mounts included) while it runs.
func (b *Backend) openRoot(ctx context.Context, id string) (*rootfs.Root, error) {
	_, task, err := b.runningTask(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("copy: %w (cornus copies through a running container)", err)
	}
	return rootfs.Open(fmt.Sprintf("/proc/%d/root", task.Pid()))
}

// StatPath describes a file in the container (a final link itself).
func (b *Backend) StatPath(ctx context.Context, id, path string) (backends.PathStat, error) {
	root, err := b.openRoot(ctx, id)
	if err != nil {
		return backends.PathStat{}, err
	}
	defer root.Close()
	st, err := root.Lstat(path)
	if err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return backends.PathStat{Name: st.Name, Size: st.Size, Mode: uint32(st.Mode), Mtime: st.Mtime, LinkTarget: st.LinkTarget}, nil
}

// CopyFrom returns a tar of path.
func (b *Backend) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, backends.PathStat, error) {
	ps, err := b.StatPath(ctx, id, path)
	if err != nil {
		return nil, ps, err
	}
	root, err := b.openRoot(ctx, id)
	if err != nil {
		return nil, ps, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer root.Close()
		pw.CloseWithError(root.Archive(path, pw))
	}()
	return pr, ps, nil
}

// CopyTo extracts a tar into dir in the container.
func (b *Backend) CopyTo(ctx context.Context, id, dir string, r io.Reader) error {
	root, err := b.openRoot(ctx, id)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Extract(dir, r)
}
