package containerd

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

// storedAll reads every container's container.json (containers whose
// directory is half gone are skipped).
func (b *Backend) storedAll(ctx context.Context) ([]stored, error) {
	cs, err := b.cli.Containers(b.ns(ctx))
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]stored, 0, len(cs))
	for _, c := range cs {
		st, err := b.readStored(c.ID())
		if err != nil {
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

// List returns containers whose labels match every filter label.
func (b *Backend) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	all, err := b.storedAll(ctx)
	if err != nil {
		return nil, err
	}
	var out []backends.Container
	for _, st := range all {
		if !localstore.MatchLabels(st.Spec.Labels, o.Labels) {
			continue
		}
		c := b.view(st, b.recordOf(st.ID))
		if !o.All && !c.Running() {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b backends.Container) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// recordOf is the container's monitor record (a created one if missing).
func (b *Backend) recordOf(id string) monitor.Record {
	r, err := b.records.Read(id)
	if err != nil {
		return monitor.Record{ID: id, State: monitor.State{Status: monitor.StatusCreated}}
	}
	// A monitor that died while the container ran cannot report: ask
	// containerd whether the task still runs (it then is unsupervised but
	// stoppable: Stop kills it itself).
	if !r.Final() && r.State.Status != monitor.StatusCreated && !monitor.Alive(r) {
		r.State.Error = "its monitor is gone: no restarts, healthchecks or log capture until it is restarted"
		if !b.taskRunning(id) {
			r.State.Status = monitor.StatusDead
		}
	}
	return r
}

// taskRunning asks containerd whether the container's task runs.
func (b *Backend) taskRunning(id string) bool {
	ctx, cancel := context.WithTimeout(b.ns(context.Background()), 2*time.Second)
	defer cancel()
	ctr, err := b.cli.LoadContainer(ctx, id)
	if err != nil {
		return false
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return false
	}
	st, err := task.Status(ctx)
	return err == nil && (st.Status == client.Running || st.Status == client.Paused)
}

// view is List's answer for a container.
func (b *Backend) view(st stored, r monitor.Record) backends.Container {
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
func (b *Backend) Inspect(ctx context.Context, ref string) (backends.ContainerDetails, error) {
	st, err := b.find(ctx, ref)
	if err != nil {
		return backends.ContainerDetails{}, err
	}
	r := b.recordOf(st.ID)
	d := backends.ContainerDetails{Container: b.view(st, r), Pid: r.State.Pid, OOMKilled: r.State.OOMKilled, Error: r.State.Error}
	if h := r.State.Health; h != nil {
		for _, l := range h.Log {
			d.HealthLog = append(d.HealthLog, backends.HealthResult{Start: l.Start, End: l.End, ExitCode: l.ExitCode, Output: l.Output})
		}
	}
	cs := st.Spec
	d.Config = backends.ContainerConfig{
		Hostname: cs.Hostname, Domainname: cs.Domainname, User: cs.User, Env: cs.Env, Cmd: cs.Command, Entrypoint: cs.Entrypoint,
		WorkingDir: cs.WorkingDir, TTY: cs.TTY, OpenStdin: cs.StdinOpen, StopSignal: cs.StopSignal, RestartPolicy: cs.Restart,
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

// find resolves an ID, a unique ID prefix or a name.
func (b *Backend) find(ctx context.Context, ref string) (stored, error) {
	ref = strings.TrimPrefix(ref, "/")
	if st, err := b.readStored(ref); err == nil {
		return st, nil
	}
	all, err := b.storedAll(ctx)
	if err != nil {
		return stored{}, err
	}
	var match []stored
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
		return stored{}, fmt.Errorf("no such container: %s: %w", ref, errdefs.ErrNotFound)
	}
	return stored{}, fmt.Errorf("container %s: %d containers match that ID prefix: %w", ref, len(match), errdefs.ErrInvalidArgument)
}

// byName is the ID of the container called name.
func (b *Backend) byName(ctx context.Context, name string) (string, error) {
	all, err := b.storedAll(ctx)
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

// resolveID maps a reference to an ID ("" if unknown).
func (b *Backend) resolveID(ctx context.Context, ref string) string {
	st, err := b.find(ctx, ref)
	if err != nil {
		return ""
	}
	return st.ID
}

// exists reports whether the container's directory is there.
func (b *Backend) exists(id string) bool {
	_, err := os.Stat(b.cfg.containerDir(id))
	return err == nil
}
