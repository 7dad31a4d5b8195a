package monitor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// maxProbeOutput caps what a probe result keeps of its output (Docker's).
const maxProbeOutput = 4096

// applyProbe is Docker's handling of one probe result: success makes the
// container healthy; a failure counts toward retries, except while the
// container is still starting within its start period; retries failures
// in a row make it unhealthy. It returns a new Health (the log is
// copied, never shared with the old value).
func applyProbe(h Health, r HealthResult, startedAt time.Time, hc Healthcheck) Health {
	h.Log = append(slices.Clone(h.Log), r)
	if n := len(h.Log); n > HealthLogSize {
		h.Log = h.Log[n-HealthLogSize:]
	}
	if r.ExitCode == 0 {
		h.FailingStreak = 0
		h.Status = HealthHealthy
		return h
	}
	if h.Status == HealthStarting && r.Start.Sub(startedAt) < hc.StartPeriod {
		return h
	}
	h.FailingStreak++
	if h.FailingStreak >= orInt(hc.Retries, DefaultRetries) {
		h.Status = HealthUnhealthy
	}
	return h
}

// probeInterval is Docker's choice of the next delay: the start interval
// while the container is starting within its start period, else the
// interval.
func probeInterval(hc Healthcheck, status string, sinceStart time.Duration) time.Duration {
	if status == HealthStarting && sinceStart < hc.StartPeriod {
		return orDuration(hc.StartInterval, DefaultStartInterval)
	}
	return orDuration(hc.Interval, DefaultInterval)
}

// watchHealth probes one run (gen) of the main process until ctx ends.
func (m *monitor) watchHealth(ctx context.Context, gen int, startedAt time.Time, hc Healthcheck, cmd []string) {
	next := func() time.Duration {
		m.mu.Lock()
		defer m.mu.Unlock()
		status := ""
		if h := m.rec.State.Health; h != nil {
			status = h.Status
		}
		return probeInterval(hc, status, time.Since(startedAt))
	}
	t := time.NewTimer(next())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r := m.probe(ctx, cmd, orDuration(hc.Timeout, DefaultTimeout))
		if ctx.Err() != nil {
			return // the run ended mid-probe: the result says nothing
		}
		m.mu.Lock()
		if m.gen == gen && m.rec.State.Health != nil {
			h := applyProbe(*m.rec.State.Health, r, startedAt, hc)
			changed := h.Status != m.rec.State.Health.Status
			m.rec.State.Health = &h
			m.persistLocked()
			if changed {
				m.eventLocked("health_status: "+h.Status, nil)
			}
		}
		m.mu.Unlock()
		t.Reset(next())
	}
}

// probe runs the test once, as Docker records it: a probe past its
// timeout or one that could not run is exit code -1 with the reason.
func (m *monitor) probe(ctx context.Context, cmd []string, timeout time.Duration) HealthResult {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &cappedBuffer{max: maxProbeOutput}
	start := time.Now()
	code, err := m.task.Exec(pctx, cmd, out)
	r := HealthResult{Start: start, End: time.Now(), ExitCode: code, Output: out.String()}
	switch {
	case ctx.Err() == nil && pctx.Err() != nil:
		r.ExitCode, r.Output = -1, fmt.Sprintf("Health check exceeded timeout (%v)", timeout)
	case err != nil:
		r.ExitCode, r.Output = -1, err.Error()
	}
	return r
}

// cappedBuffer keeps the first max bytes written and accepts the rest, so
// a chatty probe neither fails nor grows the record.
type cappedBuffer struct {
	max int
	mu  sync.Mutex
	buf []byte
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}
