package podman

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// Top lists the container's processes. Podman takes ps descriptors
// ("pid,user,args") and answers a table; ps options it does not know
// ("-ef", "aux") make it run ps in the container and answer its lines
// whole, which are split into columns here.
func (b *Backend) Top(ctx context.Context, id string, psArgs string) (backends.Processes, error) {
	q := url.Values{}
	if psArgs != "" {
		q.Set("ps_args", psArgs)
	}
	release, err := b.guard(ctx, classThreadEnding)
	if err != nil {
		return backends.Processes{}, fmt.Errorf("top of container %s: %w", id, err)
	}
	defer release()
	var p backends.Processes
	if err := b.cli.call(ctx, request{method: "GET", path: containerPath(id, "top"), query: q}, &p); err != nil {
		return backends.Processes{}, fmt.Errorf("top of container %s: %w", id, err)
	}
	return splitColumns(p), nil
}

// splitColumns splits a one-column table of whole ps lines into columns,
// the last column keeping the rest of the line (the command).
func splitColumns(p backends.Processes) backends.Processes {
	if len(p.Titles) != 1 || !strings.Contains(strings.TrimSpace(p.Titles[0]), " ") {
		return p
	}
	titles := strings.Fields(p.Titles[0])
	out := backends.Processes{Titles: titles}
	for _, row := range p.Processes {
		line := strings.Join(row, " ")
		fields := strings.Fields(line)
		if len(fields) > len(titles) {
			// Rejoin the tail: the command may hold spaces.
			rest := line
			for range len(titles) - 1 {
				rest = strings.TrimLeft(rest, " \t")
				i := strings.IndexAny(rest, " \t")
				rest = rest[i:]
			}
			fields = append(fields[:len(titles)-1], strings.TrimSpace(rest))
		}
		out.Processes = append(out.Processes, fields)
	}
	return out
}

// statsReport is GET /libpod/containers/stats?stream=false.
type statsReport struct {
	Error *struct {
		Message string `json:"message"`
	} `json:"Error"`
	Stats []struct {
		ContainerID string   `json:"ContainerID"`
		PerCPU      []uint64 `json:"PerCPU"`
		CPUNano     uint64   `json:"CPUNano"`
		SystemNano  uint64   `json:"SystemNano"`
		MemUsage    uint64   `json:"MemUsage"`
		MemLimit    uint64   `json:"MemLimit"`
		NetInput    uint64   `json:"NetInput"`
		NetOutput   uint64   `json:"NetOutput"`
		BlockInput  uint64   `json:"BlockInput"`
		BlockOutput uint64   `json:"BlockOutput"`
		PIDs        uint64   `json:"PIDs"`
	} `json:"Stats"`
}

// Stats samples the container once, passing podman's counters through.
func (b *Backend) Stats(ctx context.Context, id string) (backends.Stats, error) {
	var r statsReport
	q := url.Values{"containers": {id}, "stream": {"false"}}
	err := b.cli.call(ctx, request{method: "GET", path: "/containers/stats", query: q}, &r)
	if err == nil && r.Error != nil && r.Error.Message != "" {
		err = fmt.Errorf("%s: %w", r.Error.Message, classify(500, r.Error.Message))
	}
	if err != nil {
		return backends.Stats{}, fmt.Errorf("stats of container %s: %w", id, err)
	}
	if len(r.Stats) == 0 {
		return backends.Stats{}, fmt.Errorf("stats of container %s: podman sent no sample (is it running?): %w", id, classify(409, ""))
	}
	s := r.Stats[0]
	return backends.Stats{
		Time: time.Now(), CPUTotal: time.Duration(s.CPUNano), SystemCPU: time.Duration(s.SystemNano), OnlineCPUs: len(s.PerCPU),
		MemoryUsage: s.MemUsage, MemoryLimit: s.MemLimit, Pids: s.PIDs,
		NetRx: s.NetInput, NetTx: s.NetOutput, BlockRead: s.BlockInput, BlockWrite: s.BlockOutput,
	}, nil
}
