package server

import (
	"context"
	"fmt"
	"net/http"
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
	if _, err := s.b.List(ctx, backends.ListOptions{Labels: map[string]string{readyLabel: "probe"}}); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: the %s backend: %v\n", s.b.Name(), err)
		return
	}
	fmt.Fprintln(w, "ok")
}

// readyLabel selects no container: readyz's list is a probe of the
// backend, not a count.
const readyLabel = "dev.cornus.readyz"
