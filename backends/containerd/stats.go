package containerd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1/stats"
	"github.com/containerd/errdefs"
	"github.com/containerd/typeurl/v2"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
)

// Stats samples the task's cgroup (v1 metrics).
func (b *Backend) Stats(ctx context.Context, id string) (backends.Stats, error) {
	st, _, err := b.Running(ctx, id)
	if err != nil {
		return backends.Stats{}, err
	}
	ctx = b.ns(ctx)
	_, task, err := driver{b}.task(ctx, st.ID)
	if err != nil {
		return backends.Stats{}, daemonless.NotRunning(st.Name)
	}
	m, err := task.Metrics(ctx)
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
