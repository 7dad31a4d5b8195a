package records

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

// Store is a backend's containers: their container.json files and
// monitor records. The backend says where they live and asks its runtime.
type Store struct {
	// Dir is the container's directory, which holds its container.json.
	Dir func(id string) string
	// IDs lists the IDs of the containers there may be; an error is
	// reported as "list containers: ...".
	IDs func(ctx context.Context) ([]string, error)
	// Records is the monitor records.
	Records *monitor.Store
	// TaskRunning asks the runtime whether the container runs (or is
	// paused), for a container whose monitor is gone.
	TaskRunning func(id string) bool
}

// All reads every container's container.json (containers whose
// directory is half gone are skipped).
func (s *Store) All(ctx context.Context) ([]Container, error) {
	ids, err := s.IDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]Container, 0, len(ids))
	for _, id := range ids {
		c, err := s.Read(id)
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// List returns containers whose labels match every filter label.
func (s *Store) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	all, err := s.All(ctx)
	if err != nil {
		return nil, err
	}
	var out []backends.Container
	for _, st := range all {
		if !backends.MatchLabels(st.Spec.Labels, o.Labels) {
			continue
		}
		c := s.View(st, s.RecordOf(st.ID))
		if !o.All && !c.Running() {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b backends.Container) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// RecordOf is the container's monitor record (a created one if missing).
func (s *Store) RecordOf(id string) monitor.Record {
	r, err := s.Records.Read(id)
	if err != nil {
		return monitor.Record{ID: id, State: monitor.State{Status: monitor.StatusCreated}}
	}
	// A monitor that died while the container ran cannot report: ask
	// the runtime whether the container still runs (it then is unsupervised but
	// stoppable: Stop kills it itself).
	if !r.Final() && r.State.Status != monitor.StatusCreated && !monitor.Alive(r) {
		r.State.Error = "its monitor is gone: no restarts, healthchecks or log capture until it is restarted"
		if !s.TaskRunning(id) {
			r.State.Status = monitor.StatusDead
		}
	}
	return r
}

// View is List's answer for a container.
func (s *Store) View(st Container, r monitor.Record) backends.Container {
	cs := st.Spec
	c := backends.Container{
		ID: st.ID, Name: st.Name, Image: cs.Image, ImageID: st.ImageID, Command: strings.Join(append(slices.Clone(cs.Entrypoint), cs.Command...), " "),
		Labels: cs.Labels, State: stateOf(r, st.Paused), ExitCode: r.State.ExitCode, Created: st.Created,
		StartedAt: r.State.StartedAt, FinishedAt: r.State.FinishedAt, RestartCount: r.State.RestartCount,
		Ports: slices.Clone(st.Ports), Networks: st.Networks, Mounts: st.Mounts,
	}
	if h := r.State.Health; h != nil && c.State == backends.StateRunning {
		c.Health = backends.Health(h.Status)
	}
	return c
}

func stateOf(r monitor.Record, paused bool) backends.State {
	switch r.State.Status {
	case monitor.StatusRunning:
		if paused {
			return backends.StatePaused
		}
		return backends.StateRunning
	case monitor.StatusRestarting:
		return backends.StateRestarting
	case monitor.StatusExited:
		return backends.StateExited
	case monitor.StatusDead:
		return backends.StateDead
	}
	return backends.StateCreated
}

// Inspect returns a container by ID, ID prefix or name.
func (s *Store) Inspect(ctx context.Context, ref string) (backends.ContainerDetails, error) {
	st, err := s.Find(ctx, ref)
	if err != nil {
		return backends.ContainerDetails{}, err
	}
	r := s.RecordOf(st.ID)
	d := backends.ContainerDetails{Container: s.View(st, r), Pid: r.State.Pid, OOMKilled: r.State.OOMKilled, Error: r.State.Error}
	if h := r.State.Health; h != nil {
		for _, l := range h.Log {
			d.HealthLog = append(d.HealthLog, backends.HealthResult{Start: l.Start, End: l.End, ExitCode: l.ExitCode, Output: l.Output})
		}
	}
	cs := st.Spec
	d.Config = backends.ContainerConfig{
		Hostname: cs.Hostname, Domainname: cs.Domainname, User: cs.User, Env: cs.Env, Cmd: cs.Command, Entrypoint: cs.Entrypoint,
		WorkingDir: cs.WorkingDir, TTY: cs.TTY, OpenStdin: cs.StdinOpen, StopSignal: cs.StopSignal.String(), RestartPolicy: cs.Restart,
		Privileged: cs.Privileged, Init: cs.Init,
	}
	if d.Config.Hostname == "" {
		d.Config.Hostname = st.ID[:12]
	}
	if d.Config.RestartPolicy.Name == "" {
		d.Config.RestartPolicy.Name = spec.RestartNo
	}
	if cs.StopTimeout != nil {
		secs := int(cs.StopTimeout.Seconds())
		d.Config.StopTimeout = &secs
	}
	if h := cs.Healthcheck; h != nil && !h.Disabled {
		d.Config.Healthcheck = &spec.Healthcheck{Test: h.Test, Interval: spec.DurationOf(h.Interval), Timeout: spec.DurationOf(h.Timeout),
			StartPeriod: spec.DurationOf(h.StartPeriod), StartInterval: spec.DurationOf(h.StartInterval)}
		if h.Retries > 0 {
			retries := h.Retries
			d.Config.Healthcheck.Retries = &retries
		}
	}
	return d, nil
}

// Find resolves an ID, a unique ID prefix or a name.
func (s *Store) Find(ctx context.Context, ref string) (Container, error) {
	ref = strings.TrimPrefix(ref, "/")
	if st, err := s.Read(ref); err == nil {
		return st, nil
	}
	all, err := s.All(ctx)
	if err != nil {
		return Container{}, err
	}
	var match []Container
	for _, st := range all {
		if st.Name == ref {
			return st, nil
		}
		if strings.HasPrefix(st.ID, ref) {
			match = append(match, st)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return Container{}, fmt.Errorf("no such container: %s: %w", ref, errdefs.ErrNotFound)
	}
	return Container{}, fmt.Errorf("container %s: %d containers match that ID prefix: %w", ref, len(match), errdefs.ErrInvalidArgument)
}

// ByName is the ID of the container called name.
func (s *Store) ByName(ctx context.Context, name string) (string, error) {
	all, err := s.All(ctx)
	if err != nil {
		return "", err
	}
	for _, st := range all {
		if st.Name == name {
			return st.ID, nil
		}
	}
	return "", fmt.Errorf("no such container: %s: %w", name, errdefs.ErrNotFound)
}

// ResolveID maps a reference to an ID ("" if unknown).
func (s *Store) ResolveID(ctx context.Context, ref string) string {
	st, err := s.Find(ctx, ref)
	if err != nil {
		return ""
	}
	return st.ID
}
