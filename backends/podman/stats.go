package podman

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

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
	_, err := b.cli.call(ctx, request{method: "GET", path: "/containers/stats", query: q}, &r)
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
