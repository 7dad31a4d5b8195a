package incus

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Stats samples the container's usage from Incus's state. Incus reports
// CPU time since start but not the host's, so the system CPU is the wall
// time since start times the online CPUs: percentages computed from two
// samples read low (docker stats' formula assumes the host's CPU time).
func (b *Backend) Stats(ctx context.Context, id string) (backends.Stats, error) {
	in, err := b.find(ctx, id)
	if err != nil {
		return backends.Stats{}, fmt.Errorf("stats of container %s: %w", id, err)
	}
	var st instanceState
	if err := b.cli.call(ctx, request{method: "GET", path: instancePath(in.Name) + "/state"}, &st); err != nil {
		return backends.Stats{}, fmt.Errorf("stats of container %s: %w", id, err)
	}
	now := time.Now()
	out := backends.Stats{Time: now, CPUTotal: time.Duration(st.CPU.Usage), OnlineCPUs: onlineCPUs(),
		MemoryUsage: uint64(max(st.Memory.Usage, 0)), MemoryLimit: uint64(max(st.Memory.Total, 0)), Pids: uint64(max(st.Processes, 0))}
	r := recordOf(in)
	if !r.State.StartedAt.IsZero() {
		out.SystemCPU = now.Sub(r.State.StartedAt) * time.Duration(out.OnlineCPUs)
	}
	for name, n := range st.Network {
		if name == "lo" {
			continue
		}
		out.NetRx += uint64(max(n.Counters.BytesReceived, 0))
		out.NetTx += uint64(max(n.Counters.BytesSent, 0))
	}
	return out, nil
}

// Top lists the container's processes (docker top) through the helper's
// view of the container's /proc; psArgs are not supported beyond the
// default columns.
func (b *Backend) Top(ctx context.Context, id string, psArgs string) (backends.Processes, error) {
	in, err := b.find(ctx, id)
	if err != nil {
		return backends.Processes{}, fmt.Errorf("top of container %s: %w", id, err)
	}
	if in.Status != "Running" {
		return backends.Processes{}, fmt.Errorf("top of container %s: container is not running: %w", id, errdefs.ErrConflict)
	}
	var out strings.Builder
	code, err := b.runHelper(ctx, in, helperRequest{Op: "exec", Cmd: []string{"ps", "-o", "pid,user,args"}, Privileged: true},
		streams{stdout: &out, stderr: &out})
	if err != nil {
		return backends.Processes{}, fmt.Errorf("top of container %s: %w", id, err)
	}
	if code != 0 {
		return backends.Processes{}, fmt.Errorf("top of container %s: ps exited %d (the image needs a ps): %s: %w", id, code, strings.TrimSpace(out.String()), errdefs.ErrFailedPrecondition)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	p := backends.Processes{Titles: strings.Fields(lines[0])}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < len(p.Titles) {
			continue
		}
		// The last column (the command) keeps its spaces.
		last := len(p.Titles) - 1
		f[last] = strings.Join(f[last:], " ")
		p.Processes = append(p.Processes, f[:last+1])
	}
	return p, nil
}

func onlineCPUs() int { return runtime.NumCPU() }
