package podman

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// listInspects bounds the inspects one List runs at a time.
const listInspects = 8

// List returns containers whose labels match every filter label. Podman's
// list names networks and mount targets only: network IDs come from one
// network list, and a container with mounts (or between runs, see
// restarting) is inspected for the rest, as Docker's list has them (docker
// compose compares network IDs and volume names to decide a recreate).
func (b *Backend) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	q := url.Values{"all": {fmt.Sprint(o.All)}}
	if len(o.Labels) > 0 {
		q.Set("filters", filters(map[string][]string{"label": labelFilters(o.Labels)}))
	}
	var entries []containerListEntry
	if err := b.cli.call(ctx, request{method: "GET", path: "/containers/json", query: q}, &entries); err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]backends.Container, len(entries))
	var ids map[string]string
	if slices.ContainsFunc(entries, func(e containerListEntry) bool { return len(e.Networks) > 0 }) {
		ids = b.networkIDs(ctx)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, listInspects)
	for i, e := range entries {
		out[i] = summary(e, ids)
		between := slices.Contains(betweenRuns, e.State) && e.StartedAt > 0
		if len(e.Mounts) == 0 && !between {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			d, err := b.inspect(ctx, e.ID)
			if err != nil {
				return // gone meanwhile: the list entry stands
			}
			c := &out[i]
			c.Mounts = details(d, ids).Mounts
			if between && restarting(d) {
				c.State, c.RestartCount, c.FinishedAt = backends.StateRestarting, d.RestartCount, realTime(d.State.FinishedAt)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b backends.Container) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// networkIDs maps network names to podman's IDs (podman 4 names a
// container's networks, even as their NetworkID); nil when podman does not
// answer, and then names stand in.
func (b *Backend) networkIDs(ctx context.Context) map[string]string {
	list, err := b.listNetworks(ctx, nil)
	if err != nil {
		return nil
	}
	ids := make(map[string]string, len(list))
	for _, n := range list {
		ids[n.Name] = n.ID
	}
	return ids
}

// summary maps a list entry. Podman's list has no restart count (podman
// 4), and names networks and mount targets only: Inspect has the rest.
func summary(e containerListEntry, networkIDs map[string]string) backends.Container {
	c := backends.Container{
		ID: e.ID, Image: familiar(e.Image), ImageID: e.ImageID, Command: strings.Join(e.Command, " "),
		Labels: e.Labels, State: stateOf(e.State), Health: listHealth(e.Status), ExitCode: e.ExitCode,
		Created: e.Created, StartedAt: unixTime(e.StartedAt), RestartCount: e.Restarts,
	}
	if len(e.Names) > 0 {
		c.Name = e.Names[0]
	}
	if c.State == backends.StateExited {
		c.FinishedAt = unixTime(e.ExitedAt)
	}
	for _, p := range e.Ports {
		n := max(int(p.Range), 1)
		for i := range n {
			c.Ports = append(c.Ports, backends.PortBinding{
				HostIP: p.HostIP, HostPort: int(p.HostPort) + i, ContainerPort: int(p.ContainerPort) + i, Protocol: cmp.Or(p.Protocol, "tcp"),
			})
		}
	}
	backends.SortPorts(c.Ports)
	if len(e.Networks) > 0 {
		c.Networks = map[string]backends.EndpointInfo{}
		for _, n := range e.Networks {
			c.Networks[n] = backends.EndpointInfo{NetworkID: cmp.Or(networkIDs[n], n)}
		}
	}
	for _, m := range e.Mounts {
		c.Mounts = append(c.Mounts, backends.MountPoint{Destination: m})
	}
	return c
}

// listHealth reads the health from a list entry's status: podman 4 puts
// the bare health status there, podman 5 a status line ending in it.
func listHealth(status string) backends.Health {
	s := strings.ToLower(status)
	for _, h := range []backends.Health{backends.HealthUnhealthy, backends.HealthHealthy, backends.HealthStarting} {
		if s == string(h) || strings.HasSuffix(s, "("+string(h)+")") {
			return h
		}
	}
	return backends.HealthNone
}

// unixTime is a unix time in seconds; podman's "never" (negative or 0) is
// the zero time.
func unixTime(s int64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	return time.Unix(s, 0)
}

// Inspect returns the container's configuration and runtime state.
func (b *Backend) Inspect(ctx context.Context, id string) (backends.ContainerDetails, error) {
	d, err := b.inspect(ctx, id)
	if err != nil {
		return backends.ContainerDetails{}, fmt.Errorf("inspect container %s: %w", id, err)
	}
	var ids map[string]string
	if len(d.NetworkSettings.Networks) > 0 {
		ids = b.networkIDs(ctx)
	}
	return details(d, ids), nil
}

func (b *Backend) inspect(ctx context.Context, id string) (containerInspect, error) {
	var d containerInspect
	err := b.cli.call(ctx, request{method: "GET", path: containerPath(id, "json")}, &d)
	return d, err
}

// running reports whether the container's process is up.
func running(d containerInspect) bool {
	return d.State.Running || d.State.Paused || stateOf(d.State.Status) == backends.StateRunning
}

// stateOf maps podman's states onto Docker's words.
func stateOf(s string) backends.State {
	switch s {
	case "configured", "created", "initialized":
		return backends.StateCreated
	case "running", "stopping":
		return backends.StateRunning
	case "paused":
		return backends.StatePaused
	case "stopped", "exited":
		return backends.StateExited
	case "removing":
		return backends.StateRemoving
	}
	return backends.StateDead
}

// betweenRuns are podman's states of a container between an exit and the
// next start: its restart policy restarts it in "stopped", through
// "configured" and "created"/"initialized" (podman 4 restarts at once,
// with no backoff, and never says "restarting").
var betweenRuns = []string{"stopped", "configured", "created", "initialized"}

// restarting reports what Docker calls restarting: a container that
// exited and that its restart policy restarts. It has run before (a fresh
// container is merely created), and its policy applies to this exit
// (podman's own check: always and unless-stopped restart any exit not
// asked for, on-failure a failure until the retries are spent). A stop
// asked for ends in "exited" once the stop call returns.
func restarting(r containerInspect) bool {
	if realTime(r.State.StartedAt).IsZero() || !slices.Contains(betweenRuns, r.State.Status) {
		return false
	}
	p := r.HostConfig.RestartPolicy
	switch p.Name {
	case spec.RestartAlways, spec.RestartUnlessStopped:
		return true
	case spec.RestartOnFailure:
		return r.State.ExitCode != 0 && (p.MaximumRetryCount == 0 || r.RestartCount < p.MaximumRetryCount)
	}
	return false
}

// healthOf maps podman's health status.
func healthOf(s string) backends.Health {
	switch strings.ToLower(s) {
	case "starting":
		return backends.HealthStarting
	case "healthy":
		return backends.HealthHealthy
	case "unhealthy":
		return backends.HealthUnhealthy
	}
	return backends.HealthNone
}

// details maps an inspect; networkIDs maps network names to IDs (nil:
// podman's own NetworkID, which podman 4 sets to the name).
func details(r containerInspect, networkIDs map[string]string) backends.ContainerDetails {
	d := backends.ContainerDetails{
		Container: backends.Container{
			ID: r.ID, Name: strings.TrimPrefix(r.Name, "/"), Image: familiar(cmp.Or(r.ImageName, r.Config.Image)), ImageID: r.Image,
			Command: strings.Join(append([]string{r.Path}, r.Args...), " "), Labels: r.Config.Labels,
			State: stateOf(r.State.Status), ExitCode: r.State.ExitCode, Created: r.Created,
			StartedAt: realTime(r.State.StartedAt), FinishedAt: realTime(r.State.FinishedAt), RestartCount: r.RestartCount,
		},
		Pid: r.State.Pid, OOMKilled: r.State.OOMKilled, Error: r.State.Error,
	}
	switch {
	case r.State.Paused:
		d.State = backends.StatePaused
	case r.State.Restarting || restarting(r):
		d.State = backends.StateRestarting
	case r.State.Dead:
		d.State = backends.StateDead
	}
	c := r.Config
	d.Config = backends.ContainerConfig{
		Hostname: c.Hostname, Domainname: r.HostConfig.Sysctls["kernel.domainname"], User: c.User,
		Env: c.Env, Cmd: c.Cmd, Entrypoint: []string(c.Entrypoint), WorkingDir: c.WorkingDir,
		TTY: c.Tty, OpenStdin: c.OpenStdin, StopSignal: stopSignalOf(r).String(),
		Healthcheck:   specHealthcheck(c.Healthcheck),
		RestartPolicy: spec.RestartPolicy{Name: cmp.Or(r.HostConfig.RestartPolicy.Name, spec.RestartNo), MaxRetries: r.HostConfig.RestartPolicy.MaximumRetryCount},
		Privileged:    r.HostConfig.Privileged,
		Init:          r.HostConfig.Init || strings.EqualFold(c.Annotations["io.podman.annotations.init"], "true"),
	}
	if h := d.Config.Healthcheck; h != nil {
		if v, err := time.ParseDuration(c.Labels[labelHealthStartInterval]); err == nil && v > 0 {
			h.StartInterval = spec.DurationOf(v)
		}
	}
	if c.StopTimeout > 0 {
		t := int(c.StopTimeout)
		d.Config.StopTimeout = &t
	}
	if h := r.State.Health; h != nil {
		d.Health = healthOf(h.Status)
		for _, l := range h.Log {
			d.HealthLog = append(d.HealthLog, backends.HealthResult{Start: parseTime(l.Start), End: parseTime(l.End), ExitCode: l.ExitCode, Output: l.Output})
		}
	}
	for _, m := range r.Mounts {
		d.Mounts = append(d.Mounts, backends.MountPoint{Type: m.Type, Name: m.Name, Source: m.Source, Destination: m.Destination, ReadOnly: !m.RW})
	}
	for port, binds := range r.NetworkSettings.Ports {
		num, proto, _ := strings.Cut(port, "/")
		cp, _ := strconv.Atoi(num)
		for _, pb := range binds {
			hp, _ := strconv.Atoi(pb.HostPort)
			d.Ports = append(d.Ports, backends.PortBinding{HostIP: pb.HostIP, HostPort: hp, ContainerPort: cp, Protocol: cmp.Or(proto, "tcp")})
		}
	}
	backends.SortPorts(d.Ports)
	if len(r.NetworkSettings.Networks) > 0 {
		d.Networks = map[string]backends.EndpointInfo{}
		for name, ep := range r.NetworkSettings.Networks {
			d.Networks[name] = backends.EndpointInfo{
				NetworkID: cmp.Or(networkIDs[name], ep.NetworkID, name), IPAddress: ep.IPAddress, IPPrefixLen: ep.IPPrefixLen, Gateway: ep.Gateway,
				MacAddress: ep.MacAddress, IPv6Address: ep.GlobalIPv6Address, Aliases: slices.Clone(ep.Aliases),
			}
		}
	}
	return d
}

// specHealthcheck renders podman's healthcheck config; "NONE" (what the
// backend sets when the engine runs the checks) reads as none.
func specHealthcheck(h *healthConfig) *spec.Healthcheck {
	if h == nil || len(h.Test) == 0 || h.Test[0] == "NONE" {
		return nil
	}
	out := &spec.Healthcheck{Test: slices.Clone(h.Test)}
	dur := func(d time.Duration) *spec.Duration {
		if d == 0 {
			return nil
		}
		return spec.DurationOf(d)
	}
	out.Interval, out.Timeout, out.StartPeriod = dur(h.Interval), dur(h.Timeout), dur(h.StartPeriod)
	if h.Retries != 0 {
		r := h.Retries
		out.Retries = &r
	}
	return out
}

// realTime is t, or the zero time for podman's "never" (year 1).
func realTime(t time.Time) time.Time {
	if t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// parseTime reads podman's RFC 3339 timestamps; garbage gives the zero time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return realTime(t)
}
