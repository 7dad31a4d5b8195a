package dockerhost

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Top lists the container's processes; psArgs are ps options ("" = -ef).
func (b *Backend) Top(ctx context.Context, id string, psArgs string) (backends.Processes, error) {
	res, err := b.cli.ContainerTop(ctx, id, client.ContainerTopOptions{Arguments: strings.Fields(psArgs)})
	if err != nil {
		return backends.Processes{}, wrap(err, "top of container %s", id)
	}
	return backends.Processes{Titles: res.Titles, Processes: res.Processes}, nil
}

// Stats samples the container once (GET /containers/{id}/stats, one-shot).
func (b *Backend) Stats(ctx context.Context, id string) (backends.Stats, error) {
	res, err := b.cli.ContainerStats(ctx, id, client.ContainerStatsOptions{})
	if err != nil {
		return backends.Stats{}, wrap(err, "stats of container %s", id)
	}
	defer res.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		return backends.Stats{}, wrap(err, "stats of container %s: decode", id)
	}
	out := backends.Stats{
		Time: s.Read, CPUTotal: time.Duration(s.CPUStats.CPUUsage.TotalUsage), SystemCPU: time.Duration(s.CPUStats.SystemUsage),
		OnlineCPUs: int(s.CPUStats.OnlineCPUs), MemoryUsage: s.MemoryStats.Usage, MemoryLimit: s.MemoryStats.Limit, Pids: s.PidsStats.Current,
	}
	for _, n := range s.Networks {
		out.NetRx += n.RxBytes
		out.NetTx += n.TxBytes
	}
	for _, e := range s.BlkioStats.IoServiceBytesRecursive {
		switch strings.ToLower(e.Op) {
		case "read":
			out.BlockRead += e.Value
		case "write":
			out.BlockWrite += e.Value
		}
	}
	return out, nil
}
