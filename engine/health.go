package engine

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Docker's healthcheck defaults.
const (
	defaultHealthInterval = 30 * time.Second
	defaultHealthTimeout  = 30 * time.Second
	defaultHealthRetries  = 3
)

// healthMonitor runs one container's healthcheck through Exec, for backends
// whose runtime has no native healthchecks. It outlives the operation that
// started the container (a dependent waits on it after that operation's
// context is done) and stops when the container stops or goes away, when
// it is restarted, or with the engine's process.
type healthMonitor struct {
	stop   context.CancelFunc
	mu     sync.Mutex
	status backends.Health
	log    []backends.HealthResult
}

func (m *healthMonitor) get() backends.Health {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// startHealth begins checking container id with h, unless the backend
// checks health natively or the app has no test.
func (e *Engine) startHealth(ctx context.Context, id string, h *spec.Healthcheck) {
	if e.caps.NativeHealthcheck || h == nil || h.Disable || len(h.Test) == 0 || h.Test[0] == "NONE" {
		return
	}
	mctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	m := &healthMonitor{status: backends.HealthStarting, stop: stop}
	e.mu.Lock()
	if old := e.health[id]; old != nil {
		old.stop() // the container was restarted: probe afresh
	}
	e.health[id] = m
	e.mu.Unlock()
	go e.runHealth(mctx, id, h, m)
}

func (e *Engine) runHealth(ctx context.Context, id string, h *spec.Healthcheck, m *healthMonitor) {
	interval, timeout := durOr(h.Interval, defaultHealthInterval), durOr(h.Timeout, defaultHealthTimeout)
	startPeriod, startInterval := durOr(h.StartPeriod, 0), durOr(h.StartInterval, 5*time.Second)
	retries := defaultHealthRetries
	if h.Retries != nil {
		retries = *h.Retries
	}
	cmd := h.Test[1:]
	if h.Test[0] == "CMD-SHELL" {
		cmd = []string{"/bin/sh", "-c", h.Test[1]}
	}
	started := time.Now()
	failures := 0
	for {
		inStart := time.Since(started) < startPeriod
		wait := interval
		if inStart {
			wait = startInterval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		var out bytes.Buffer
		cctx, cancel := context.WithTimeout(ctx, timeout)
		begin := time.Now()
		code, err := e.b.Exec(cctx, id, backends.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &out})
		cancel()
		if ctx.Err() != nil {
			return
		}
		if errdefs.IsNotFound(err) || errdefs.IsConflict(err) {
			return // removed, or not running: a start probes anew
		}
		if err != nil {
			code = -1
			out.WriteString(err.Error())
		}
		m.mu.Lock()
		m.log = append(m.log, backends.HealthResult{Start: begin, End: time.Now(), ExitCode: code, Output: out.String()})
		if len(m.log) > 5 {
			m.log = m.log[1:]
		}
		switch {
		case code == 0:
			m.status, failures = backends.HealthHealthy, 0
		case inStart:
			// failures during the start period do not count
		default:
			failures++
			if failures >= retries {
				m.status = backends.HealthUnhealthy
			}
		}
		m.mu.Unlock()
	}
}

func durOr(d *spec.Duration, def time.Duration) time.Duration {
	if d == nil || *d == 0 {
		return def
	}
	return d.Std()
}

// healthOf is a container's health: the runtime's, or the engine's monitor.
func (e *Engine) healthOf(c backends.Container) backends.Health {
	if e.caps.NativeHealthcheck {
		return c.Health
	}
	e.mu.Lock()
	m := e.health[c.ID]
	e.mu.Unlock()
	if m == nil {
		return c.Health
	}
	return m.get()
}
