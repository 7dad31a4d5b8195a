package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// healthz answers a liveness probe: the server is serving. It needs no
// token and says nothing about the backend (a backend outage must not
// restart the server, which then could not report it).
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyTimeout bounds the backend call behind a readiness probe.
const readyTimeout = 5 * time.Second

// readyz answers a readiness probe: the backend answers a list of
// containers, which proves it is reachable and, on kubernetes, that the
// server's service account may list in its namespace. Otherwise 503 with
// the backend's error (a missing permission names the verb and resource),
// which `kubectl describe pod` shows beside the failed probe.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := s.b.List(ctx, backends.ListOptions{Labels: map[string]string{readyLabel: "probe"}})
	s.readiness.record(s.log, s.b.Name(), err)
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: the %s backend: %v\n", s.b.Name(), err)
		return
	}
	fmt.Fprintln(w, "ok")
}

// readyLabel selects no container: readyz's list is a probe of the
// backend, not a count.
const readyLabel = "dev.cornus.readyz"

// readiness remembers the last probe's outcome so the log says when the
// backend went away, why, and how long it took to come back: the request
// log only shows a probe's status, not its cause.
type readiness struct {
	mu    sync.Mutex
	since time.Time // when the current outage began; zero while ready
	cause string
}

func (r *readiness) record(log *slog.Logger, backend string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil && !r.since.IsZero():
		log.Info("ready again", "backend", backend, "after", time.Since(r.since).Round(time.Millisecond).String())
		r.since, r.cause = time.Time{}, ""
	case err != nil && (r.since.IsZero() || r.cause != err.Error()):
		if r.since.IsZero() {
			r.since = time.Now()
		}
		r.cause = err.Error()
		log.Warn("not ready", "backend", backend, "err", r.cause)
	}
}
