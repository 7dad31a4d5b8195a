package incus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

func (b *Backend) getInstance(ctx context.Context, name string) (instance, error) {
	var in instance
	if err := b.cli.call(ctx, request{method: "GET", path: instancePath(name)}, &in); err != nil {
		return in, err
	}
	return in, nil
}

// listInstances lists the project's instances cornus manages.
func (b *Backend) listInstances(ctx context.Context) ([]instance, error) {
	var all []instance
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/instances", query: url.Values{"recursion": {"1"}}}, &all); err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := all[:0]
	for _, in := range all {
		if in.Config[keyManaged] == "true" {
			out = append(out, in)
		}
	}
	return out, nil
}

// find resolves a container reference: the Incus instance name, the
// container name, or a unique prefix of a container ID or instance name.
func (b *Backend) find(ctx context.Context, id string) (instance, error) {
	if id == "" {
		return instance{}, fmt.Errorf("container %q: %w", id, errdefs.ErrInvalidArgument)
	}
	if !hexID(id) && url.PathEscape(id) == id {
		in, err := b.getInstance(ctx, id)
		if err == nil && in.Config[keyManaged] == "true" {
			return in, nil
		}
		if err != nil && !errdefs.IsNotFound(err) {
			return in, fmt.Errorf("container %s: %w", id, err)
		}
	}
	if hexID(id) {
		// An ID (or its prefix): no instance is named so.
	} else if in, err := b.getInstance(ctx, instanceName(id)); err == nil && in.Config[keyName] == id {
		return in, nil
	} else if err != nil && !errdefs.IsNotFound(err) {
		return in, fmt.Errorf("container %s: %w", id, err)
	}
	all, err := b.listInstances(ctx)
	if err != nil {
		return instance{}, err
	}
	var match []instance
	for _, in := range all {
		if in.Config[keyName] == id || in.Config[keyID] == id {
			return in, nil
		}
		if strings.HasPrefix(in.Name, id) || strings.HasPrefix(in.Config[keyID], id) {
			match = append(match, in)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	return instance{}, fmt.Errorf("no such container: %s: %w", id, errdefs.ErrNotFound)
}

// recordOf reads an instance's monitor record from its record directory
// (a record the host cannot read reads as never started).
func recordOf(in instance) monitor.Record {
	if dir := in.Config[keyDir]; dir != "" {
		if r, err := monitor.ReadRecord(dir); err == nil {
			return r
		}
	}
	return monitor.Record{ID: in.Name, State: monitor.State{Status: monitor.StatusCreated}}
}

// stateOf combines what Incus and the record say. The record is the truth
// about the main process; Incus says whether its init still runs (a
// stopped instance whose record was not final lost its init: killed).
func stateOf(in instance, r monitor.Record) (backends.State, int) {
	switch in.Status {
	case "Frozen", "Freezing":
		return backends.StatePaused, 0
	case "Running", "Starting", "Stopping":
		switch r.State.Status {
		case monitor.StatusRestarting:
			return backends.StateRestarting, 0
		case monitor.StatusExited, monitor.StatusDead:
			return backends.StateExited, r.State.ExitCode
		}
		return backends.StateRunning, 0
	}
	switch r.State.Status {
	case monitor.StatusCreated:
		if r.State.FinishedAt.IsZero() && r.State.StartedAt.IsZero() {
			return backends.StateCreated, 0
		}
	case monitor.StatusRunning, monitor.StatusRestarting:
		return backends.StateExited, 137 // its init was killed with it
	case monitor.StatusDead:
		return backends.StateDead, r.State.ExitCode
	}
	return backends.StateExited, r.State.ExitCode
}

// containerOf renders an instance (and its record) as cornus's container.
func (b *Backend) containerOf(in instance, _ bool) backends.Container {
	c := in.Config
	r := recordOf(in)
	out := backends.Container{
		ID: cmpOr(c[keyID], in.Name), Name: cmpOr(c[keyName], in.Name), Image: c[keyImage], ImageID: c[keyImageID],
		Created: in.CreatedAt, StartedAt: r.State.StartedAt, FinishedAt: r.State.FinishedAt, RestartCount: r.State.RestartCount,
	}
	_ = json.Unmarshal([]byte(c[keyLabels]), &out.Labels)
	var argv []string
	if json.Unmarshal([]byte(c[keyCommand]), &argv) == nil {
		out.Command = strings.Join(argv, " ")
	}
	out.State, out.ExitCode = stateOf(in, r)
	if h := r.State.Health; h != nil && out.State == backends.StateRunning {
		out.Health = backends.Health(h.Status)
	}
	_ = json.Unmarshal([]byte(c[keyPorts]), &out.Ports)
	var nics []nicPlan
	if json.Unmarshal([]byte(c[keyNetworks]), &nics) == nil && len(nics) > 0 {
		out.Networks = map[string]backends.EndpointInfo{}
		for _, n := range nics {
			out.Networks[n.Network] = backends.EndpointInfo{NetworkID: n.Bridge, IPAddress: n.IP, IPPrefixLen: n.Prefix, Gateway: n.Gateway, Aliases: n.Aliases}
		}
	}
	for _, d := range in.Devices {
		if d["type"] != "disk" || strings.HasPrefix(d["path"], ctrBase+"/") || d["path"] == "/" {
			continue
		}
		m := backends.MountPoint{Type: "bind", Source: d["source"], Destination: d["path"], ReadOnly: d["readonly"] == "true"}
		if d["pool"] != "" {
			m.Type, m.Name = "volume", d["source"]
		}
		out.Mounts = append(out.Mounts, m)
	}
	return out
}

// List returns the containers whose labels match every filter label.
func (b *Backend) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	all, err := b.listInstances(ctx)
	if err != nil {
		return nil, err
	}
	var out []backends.Container
	for _, in := range all {
		var labels map[string]string
		_ = json.Unmarshal([]byte(in.Config[keyLabels]), &labels)
		if !backends.MatchLabels(labels, o.Labels) {
			continue
		}
		c := b.containerOf(in, false)
		if !o.All && !c.Running() {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// Inspect returns a container with its configuration and runtime state.
func (b *Backend) Inspect(ctx context.Context, id string) (backends.ContainerDetails, error) {
	in, err := b.find(ctx, id)
	if err != nil {
		return backends.ContainerDetails{}, err
	}
	c := b.containerOf(in, true)
	d := backends.ContainerDetails{Container: c}
	r := recordOf(in)
	d.Error = r.State.Error
	if h := r.State.Health; h != nil {
		for _, l := range h.Log {
			d.HealthLog = append(d.HealthLog, backends.HealthResult{Start: l.Start, End: l.End, ExitCode: l.ExitCode, Output: l.Output})
		}
	}
	if c.Running() {
		var st instanceState
		if err := b.cli.call(ctx, request{method: "GET", path: instancePath(in.Name) + "/state"}, &st); err == nil {
			d.Pid = int(st.Pid)
		}
	}
	d.Config = b.configOf(in, r)
	return d, nil
}

// configOf is the effective process configuration, from process.json and
// the record's supervision.
func (b *Backend) configOf(in instance, r monitor.Record) backends.ContainerConfig {
	cfg := backends.ContainerConfig{Hostname: in.Name, Privileged: in.Config["security.privileged"] == "true", Init: true}
	if dir := in.Config[keyDir]; dir != "" {
		if p, err := readProcConfig(dir); err == nil {
			cfg.Env, cfg.Cmd, cfg.WorkingDir, cfg.User, cfg.TTY = p.Env, p.Args, p.WorkingDir, p.User, p.TTY
		}
	}
	if h, ok := infoOf(in); ok {
		cfg.Hostname = h.hostname
	}
	s := r.Supervision
	cfg.OpenStdin = s.OpenStdin
	cfg.RestartPolicy.Name, cfg.RestartPolicy.MaxRetries = s.Restart.Name, s.Restart.MaxRetries
	if s.StopSignal != 0 {
		cfg.StopSignal = spec.SignalName(int(s.StopSignal))
	}
	if s.StopGrace != nil {
		secs := int(*s.StopGrace / time.Second)
		cfg.StopTimeout = &secs
	}
	return cfg
}

// hexID reports whether ref looks like a container ID or a prefix of one
// (Docker accepts prefixes from 1 digit; cornus looks names up first
// below 12).
func hexID(ref string) bool {
	if len(ref) < 12 || len(ref) > 64 {
		return false
	}
	for _, r := range ref {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func instancePath(name string) string { return "/1.0/instances/" + url.PathEscape(name) }
