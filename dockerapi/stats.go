package dockerapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"

	"github.com/cornus-dev/cornus/backends"
)

// statsInterval is how often a streamed stats answer samples, as dockerd.
const statsInterval = time.Second

// containerStats is GET /containers/{id}/stats: one sample (stream=false;
// with one-shot=true without the previous sample CPU rates need), or one
// a second until the client goes. A stopped container uses nothing.
func (s *Server) containerStats(w http.ResponseWriter, r *http.Request) {
	src, ok := want[backends.StatsSource](s, w, backends.FeatureStats, "stats")
	if !ok {
		return
	}
	ctx := r.Context()
	d, err := s.container(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	stream := q.Get("stream") == "" || isTrue(q.Get("stream"))
	oneShot := !stream && isTrue(q.Get("one-shot"))
	sample := func() (backends.Stats, error) {
		if !d.Running() {
			return backends.Stats{Time: time.Now()}, nil
		}
		st, err := src.Stats(ctx, d.ID)
		if errdefs.IsNotFound(err) || errdefs.IsConflict(err) {
			return backends.Stats{Time: time.Now()}, nil // it stopped meanwhile
		}
		return st, err
	}
	var prev backends.Stats
	cur, err := sample()
	if err != nil {
		writeError(w, err)
		return
	}
	if !stream && !oneShot { // docker stats --no-stream: a rate needs two
		prev = cur
		if !sleep(r, statsInterval) {
			return
		}
		if cur, err = sample(); err != nil {
			writeError(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	for {
		if err := enc.Encode(statsResponse(d, cur, prev)); err != nil || !stream {
			return
		}
		flush(w)
		if !sleep(r, statsInterval) {
			return
		}
		prev = cur
		if cur, err = sample(); err != nil {
			return // the answer has begun: it ends
		}
	}
}

// sleep waits d, false when the client went first.
func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// statsResponse is a sample in dockerd's form; prev (zero: none) is the
// sample before it, for CPU rates.
func statsResponse(d backends.ContainerDetails, cur, prev backends.Stats) container.StatsResponse {
	cpu := func(st backends.Stats) container.CPUStats {
		return container.CPUStats{
			CPUUsage:    container.CPUUsage{TotalUsage: uint64(st.CPUTotal)},
			SystemUsage: uint64(st.SystemCPU),
			OnlineCPUs:  uint32(st.OnlineCPUs),
		}
	}
	out := container.StatsResponse{
		ID: d.ID, Name: "/" + d.Name, OSType: "linux",
		Read: cur.Time, PreRead: prev.Time,
		CPUStats: cpu(cur), PreCPUStats: cpu(prev),
		MemoryStats: container.MemoryStats{Usage: cur.MemoryUsage, Limit: cur.MemoryLimit},
		PidsStats:   container.PidsStats{Current: cur.Pids},
		BlkioStats: container.BlkioStats{IoServiceBytesRecursive: []container.BlkioStatEntry{
			{Op: "read", Value: cur.BlockRead}, {Op: "write", Value: cur.BlockWrite},
		}},
	}
	if d.Running() {
		out.Networks = map[string]container.NetworkStats{"eth0": {RxBytes: cur.NetRx, TxBytes: cur.NetTx}}
	}
	return out
}
