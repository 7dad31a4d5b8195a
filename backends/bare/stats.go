package bare

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Where Stats reads usage (CORNUS_BARE_STATS_SOURCE): the container's
// cgroup files, or the runtime's `events --stats` (what runsc, whose
// sandbox keeps its own accounting, must use; runc answers it too).
const (
	StatsCgroups = "cgroups"
	StatsRuntime = "runtime"
)

// Stats samples the container's usage from its cgroups, or from the
// runtime (CORNUS_BARE_STATS_SOURCE; runsc's default).
func (b *Backend) Stats(ctx context.Context, id string) (backends.Stats, error) {
	st, _, err := b.Running(ctx, id)
	if err != nil {
		return backends.Stats{}, err
	}
	if src, _ := statsSource(b.cfg.statsSource, b.rt.name); src == StatsRuntime {
		return b.runtimeStats(ctx, st.ID)
	}
	return cgroupStats(st.ID), nil
}

// statsSource is the configured source, defaulting by runtime.
func statsSource(setting, runtimeName string) (string, error) {
	switch setting {
	case "":
		if runtimeName == "runsc" {
			return StatsRuntime, nil
		}
		return StatsCgroups, nil
	case StatsCgroups, StatsRuntime:
		return setting, nil
	}
	return "", fmt.Errorf("%s=%q: want %s or %s: %w", EnvStatsSource, setting, StatsCgroups, StatsRuntime, errdefs.ErrInvalidArgument)
}

// runtimeEvent is one `events --stats` answer (runc's types, which runsc
// shares).
type runtimeEvent struct {
	Type string `json:"type"`
	Data struct {
		CPU struct {
			Usage struct {
				Total uint64 `json:"total"`
			} `json:"usage"`
		} `json:"cpu"`
		Memory struct {
			Usage struct {
				Usage uint64 `json:"usage"`
				Limit uint64 `json:"limit"`
			} `json:"usage"`
		} `json:"memory"`
		Pids struct {
			Current uint64 `json:"current"`
		} `json:"pids"`
		Blkio struct {
			IOServiceBytesRecursive []struct {
				Op    string `json:"op"`
				Value uint64 `json:"value"`
			} `json:"ioServiceBytesRecursive"`
		} `json:"blkio"`
	} `json:"data"`
}

// runtimeStats asks the runtime for one sample.
func (b *Backend) runtimeStats(ctx context.Context, id string) (backends.Stats, error) {
	out, err := b.rt.run(ctx, "events", "--stats", id)
	if err != nil {
		return backends.Stats{}, fmt.Errorf("stats: %w", err)
	}
	var ev runtimeEvent
	if err := json.Unmarshal(out, &ev); err != nil {
		return backends.Stats{}, fmt.Errorf("stats: %s events: %w", b.rt.name, err)
	}
	d := ev.Data
	s := backends.Stats{Time: time.Now(), CPUTotal: time.Duration(d.CPU.Usage.Total), MemoryUsage: d.Memory.Usage.Usage,
		MemoryLimit: d.Memory.Usage.Limit, Pids: d.Pids.Current}
	for _, e := range d.Blkio.IOServiceBytesRecursive {
		switch strings.ToLower(e.Op) {
		case "read":
			s.BlockRead += e.Value
		case "write":
			s.BlockWrite += e.Value
		}
	}
	return s, nil
}
