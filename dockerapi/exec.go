package dockerapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/common"
	"github.com/moby/moby/api/types/container"

	"github.com/cornus-dev/cornus/backends"
)

// execState is one exec instance, from create to its exit code.
type execState struct {
	id, containerID string
	cfg             container.ExecCreateRequest
	created         time.Time

	mu       sync.Mutex
	started  bool
	running  bool
	exitCode *int
	resize   chan backends.TermSize
}

// execRegistry keeps exec instances; finished ones are dropped after a
// while so a long-running server does not grow.
type execRegistry struct {
	mu    sync.Mutex
	execs map[string]*execState
}

const execRetention = 5 * time.Minute

func newExecRegistry() *execRegistry { return &execRegistry{execs: map[string]*execState{}} }

func (r *execRegistry) add(e *execState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, old := range r.execs {
		old.mu.Lock()
		stale := !old.running && time.Since(old.created) > execRetention
		old.mu.Unlock()
		if stale {
			delete(r.execs, id)
		}
	}
	r.execs[e.id] = e
}

func (r *execRegistry) get(id string) (*execState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.execs[id]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("No such exec instance: %s: %w", id, errdefs.ErrNotFound)
}

func (s *Server) execCreate(w http.ResponseWriter, r *http.Request) {
	var cfg container.ExecCreateRequest
	if err := decodeJSON(w, r, maxCreateBody, &cfg); err != nil {
		writeError(w, err)
		return
	}
	if len(cfg.Cmd) == 0 {
		writeError(w, invalidParam("No exec command specified"))
		return
	}
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	switch {
	case d.State == backends.StatePaused:
		writeError(w, fmt.Errorf("Container %s is paused, unpause the container before exec: %w", d.ID, errdefs.ErrConflict))
		return
	case !d.Running():
		writeError(w, fmt.Errorf("Container %s is not running: %w", d.ID, errdefs.ErrConflict))
		return
	}
	if err := s.policy.CheckExec("exec", cfg.Privileged); err != nil {
		writeError(w, fmt.Errorf("container %s: %w", d.Name, err))
		return
	}
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	e := &execState{id: hex.EncodeToString(id), containerID: d.ID, cfg: cfg, created: time.Now(), resize: make(chan backends.TermSize, 1)}
	s.execs.add(e)
	writeJSON(w, http.StatusCreated, common.IDResponse{ID: e.id})
}

func (s *Server) execStart(w http.ResponseWriter, r *http.Request) {
	e, err := s.execs.get(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	var req container.ExecStartRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, maxSmallBody, &req); err != nil && !errors.Is(err, io.EOF) {
			writeError(w, err)
			return
		}
	}
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		writeError(w, fmt.Errorf("Error: Exec command %s is already running: %w", e.id, errdefs.ErrConflict))
		return
	}
	e.started, e.running = true, true
	e.mu.Unlock()

	tty := e.cfg.Tty || req.Tty
	o := backends.ExecOptions{Cmd: e.cfg.Cmd, Env: e.cfg.Env, User: e.cfg.User, WorkingDir: e.cfg.WorkingDir, Privileged: e.cfg.Privileged, TTY: tty, Resize: e.resize}
	size := req.ConsoleSize
	if size == nil {
		size = e.cfg.ConsoleSize
	}
	if size != nil && size[0] > 0 && size[1] > 0 {
		o.Size = &backends.TermSize{Height: size[0], Width: size[1]}
	}
	if req.Detach {
		o.Stdout, o.Stderr = io.Discard, io.Discard
		go s.runExec(context.Background(), e, o)
		w.WriteHeader(http.StatusOK)
		return
	}
	h, err := hijack(w, r, streamType(r, tty))
	if err != nil {
		s.finishExec(e, -1)
		writeError(w, err)
		return
	}
	defer h.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errw := muxWriters(h.out, tty)
	o.Stdout, o.Stderr = io.Discard, io.Discard
	if e.cfg.AttachStdout {
		o.Stdout = out
	}
	if e.cfg.AttachStderr {
		o.Stderr = errw
	}
	if e.cfg.AttachStdin {
		o.Stdin = h.in
	} else {
		h.watchClose(cancel)
	}
	s.runExec(ctx, e, o)
}

func (s *Server) runExec(ctx context.Context, e *execState, o backends.ExecOptions) {
	code, err := s.b.Exec(ctx, e.containerID, o)
	if err != nil && code <= 0 {
		// The process could not be run: say why on its stream, and exit
		// 126 as dockerd does ("OCI runtime exec failed").
		w := o.Stderr
		if w == nil || w == io.Discard {
			w = o.Stdout
		}
		if w != nil {
			fmt.Fprintf(w, "cornus: exec failed: %v\n", err)
		}
		code = 126
	}
	s.finishExec(e, code)
}

func (s *Server) finishExec(e *execState, code int) {
	e.mu.Lock()
	e.running = false
	e.exitCode = &code
	e.created = time.Now() // retention counts from the end
	e.mu.Unlock()
}

func (s *Server) execResize(w http.ResponseWriter, r *http.Request) {
	e, err := s.execs.get(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	size, err := termSize(r)
	if err != nil {
		writeError(w, err)
		return
	}
	select {
	case <-e.resize:
	default:
	}
	select {
	case e.resize <- size:
	default:
	}
	w.WriteHeader(http.StatusCreated)
}

func (s *Server) execInspect(w http.ResponseWriter, r *http.Request) {
	e, err := s.execs.get(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	resp := container.ExecInspectResponse{
		ID: e.id, Running: e.running, ExitCode: e.exitCode, ContainerID: e.containerID,
		OpenStdin: e.cfg.AttachStdin, OpenStdout: e.cfg.AttachStdout, OpenStderr: e.cfg.AttachStderr,
		ProcessConfig: &container.ExecProcessConfig{Tty: e.cfg.Tty, Entrypoint: e.cfg.Cmd[0], Arguments: e.cfg.Cmd[1:], User: e.cfg.User},
	}
	if e.cfg.Privileged {
		p := true
		resp.ProcessConfig.Privileged = &p
	}
	writeJSON(w, http.StatusOK, resp)
}
