package dockerapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// timeout reads ?t= (or ?timeout=) seconds; absent means the container's own.
func timeout(r *http.Request) (*time.Duration, error) {
	v := r.URL.Query().Get("t")
	if v == "" {
		v = r.URL.Query().Get("timeout")
	}
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, invalidParam("invalid value for t: %q", v)
	}
	d := time.Duration(n) * time.Second
	if n < 0 {
		d = 24 * time.Hour // -1 waits indefinitely
	}
	return &d, nil
}

// signal reads ?signal= (a name such as SIGTERM, TERM or a number); absent
// is def.
func signal(r *http.Request, def spec.Signal) (spec.Signal, error) {
	v := r.URL.Query().Get("signal")
	if v == "" {
		return def, nil
	}
	n, ok := spec.ParseSignal(v)
	if !ok {
		return 0, invalidParam("Invalid signal: %s", v)
	}
	return spec.Signal(n), nil
}

// stopOptions reads a stop or restart's ?signal= and ?t=.
func stopOptions(r *http.Request) (backends.StopOptions, error) {
	sig, err := signal(r, 0)
	if err != nil {
		return backends.StopOptions{}, err
	}
	t, err := timeout(r)
	return backends.StopOptions{Signal: sig, Timeout: t}, err
}

func (s *Server) containerStop(w http.ResponseWriter, r *http.Request) {
	o, err := stopOptions(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error {
		if !d.Running() {
			return errdefs.ErrNotModified
		}
		return s.b.Stop(ctx, d.ID, o)
	})
}

func (s *Server) containerRestart(w http.ResponseWriter, r *http.Request) {
	o, err := stopOptions(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error {
		restarter, err := backends.Want[backends.Restarter](s.b, backends.FeatureRestart, "restart")
		if err != nil {
			return err
		}
		return restarter.Restart(ctx, d.ID, o)
	})
}

func (s *Server) containerKill(w http.ResponseWriter, r *http.Request) {
	sig, err := signal(r, spec.SIGKILL)
	if err != nil {
		writeError(w, err)
		return
	}
	s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error {
		if !d.Running() {
			return fmt.Errorf("Cannot kill container: %s: Container %s is not running: %w", r.PathValue("id"), d.ID, errdefs.ErrConflict)
		}
		killer, err := backends.Want[backends.Signaler](s.b, backends.FeatureKill, "kill")
		if err != nil {
			return err
		}
		return killer.Kill(ctx, d.ID, sig)
	})
}

func (s *Server) pauser(w http.ResponseWriter) (backends.Pauser, bool) {
	return want[backends.Pauser](s, w, backends.FeaturePause, "pause")
}

func (s *Server) containerPause(w http.ResponseWriter, r *http.Request) {
	if p, ok := s.pauser(w); ok {
		s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error { return p.Pause(ctx, d.ID) })
	}
}

func (s *Server) containerUnpause(w http.ResponseWriter, r *http.Request) {
	if p, ok := s.pauser(w); ok {
		s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error { return p.Unpause(ctx, d.ID) })
	}
}

// containerWait answers once the condition holds: not-running (default),
// next-exit (the next exit, even if not started yet), or removed. Headers
// go out at once, the status code when the container gets there.
func (s *Server) containerWait(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d, err := s.container(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	cond := r.URL.Query().Get("condition")
	switch cond {
	case "", "not-running", "next-exit", "removed":
	default:
		writeError(w, invalidParam("invalid condition: %q", cond))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flush(w)
	code, werr := s.waitFor(ctx, d, cond)
	// The client reads state next; the die event may still be on its way.
	s.cache.invalidateID(d.ID)
	resp := container.WaitResponse{StatusCode: int64(code)}
	if werr != nil {
		resp.Error = &container.WaitExitError{Message: werr.Error()}
	}
	_ = json.NewEncoder(w).Encode(resp)
}

func (s *Server) waitFor(ctx context.Context, d backends.ContainerDetails, cond string) (int, error) {
	if cond == "next-exit" && !d.Running() {
		// Wait for the container to start (or to have run and exited).
		for {
			cur, err := s.b.Inspect(ctx, d.ID)
			if err != nil {
				return -1, err
			}
			if cur.Running() || cur.FinishedAt.After(d.FinishedAt) {
				break
			}
			select {
			case <-ctx.Done():
				return -1, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	code, err := s.b.Wait(ctx, d.ID)
	if cond != "removed" {
		return code, err
	}
	for {
		if _, err := s.b.Inspect(ctx, d.ID); errdefs.IsNotFound(err) {
			return code, nil
		}
		select {
		case <-ctx.Done():
			return code, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) containerRename(w http.ResponseWriter, r *http.Request) {
	rn, ok := want[backends.Renamer](s, w, backends.FeatureRename, "rename")
	if !ok {
		return
	}
	name := strings.TrimPrefix(r.URL.Query().Get("name"), "/")
	if !validName.MatchString(name) {
		writeError(w, invalidParam("Invalid container name (%s), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed", name))
		return
	}
	s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error { return rn.Rename(ctx, d.ID, name) })
}

// mutate resolves the request's container, runs op on it, drops cached
// reads (even after a failure, which may have changed things half-way) and
// answers 204, or the error's status.
func (s *Server) mutate(w http.ResponseWriter, r *http.Request, op func(context.Context, backends.ContainerDetails) error) {
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err == nil {
		err = op(r.Context(), d)
		s.cache.invalidateID(d.ID)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) containerResize(w http.ResponseWriter, r *http.Request) {
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	size, err := termSize(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.sessions.resize(d.ID, size)
	w.WriteHeader(http.StatusOK)
}

func termSize(r *http.Request) (backends.TermSize, error) {
	h, err1 := strconv.ParseUint(r.URL.Query().Get("h"), 10, 16)
	wd, err2 := strconv.ParseUint(r.URL.Query().Get("w"), 10, 16)
	if err := errors.Join(err1, err2); err != nil {
		return backends.TermSize{}, invalidParam("invalid terminal size: h=%q w=%q", r.URL.Query().Get("h"), r.URL.Query().Get("w"))
	}
	return backends.TermSize{Height: uint(h), Width: uint(wd)}, nil
}
