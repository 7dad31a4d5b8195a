package dockerhost

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/statustext"
	"github.com/cornus-dev/cornus/spec"
)

// List returns containers whose labels match every filter label.
func (b *Backend) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: o.All, Filters: labelFilters(o.Labels)})
	if err != nil {
		return nil, wrap(err, "list containers")
	}
	out := make([]backends.Container, 0, len(res.Items))
	now := time.Now()
	for _, s := range res.Items {
		out = append(out, summary(s, now))
	}
	slices.SortFunc(out, func(a, b backends.Container) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// labelFilters turns ListOptions.Labels into Docker label filters:
// key=value, or key alone when the value is "".
func labelFilters(labels map[string]string) client.Filters {
	f := client.Filters{}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if v := labels[k]; v != "" {
			f.Add("label", k+"="+v)
		} else {
			f.Add("label", k)
		}
	}
	return f
}

// summary maps a list entry. The Engine's list has no start or finish
// time, only the status line: the times are read back from its age.
func summary(s container.Summary, now time.Time) backends.Container {
	c := backends.Container{
		ID: s.ID, Name: containerName(s.Names), Image: s.Image, ImageID: s.ImageID,
		Command: s.Command, Labels: s.Labels, State: backends.State(s.State),
		Created: time.Unix(s.Created, 0),
	}
	st := statustext.Parse(s.Status)
	c.Health, c.ExitCode = st.Health, st.ExitCode
	if s.Health != nil { // API 1.41 has it only in the status line
		c.Health = healthString(s.Health.Status)
	}
	switch c.State {
	case backends.StateRunning, backends.StatePaused:
		c.StartedAt = now.Add(-st.Up)
	case backends.StateExited, backends.StateRestarting:
		c.FinishedAt = now.Add(-st.Since)
	}
	for _, p := range s.Ports {
		c.Ports = append(c.Ports, backends.PortBinding{HostIP: addr(p.IP), HostPort: int(p.PublicPort), ContainerPort: int(p.PrivatePort), Protocol: p.Type})
	}
	backends.SortPorts(c.Ports)
	if s.NetworkSettings != nil {
		c.Networks = map[string]backends.EndpointInfo{}
		for name, ep := range s.NetworkSettings.Networks {
			if ep != nil {
				c.Networks[name] = endpointInfo(ep)
			}
		}
	}
	c.Mounts = mountPoints(s.Mounts)
	return c
}

// containerName picks the container's own name (links add "/other/alias"
// names) without the leading "/".
func containerName(names []string) string {
	for _, n := range names {
		if n = strings.TrimPrefix(n, "/"); !strings.Contains(n, "/") {
			return n
		}
	}
	if len(names) > 0 {
		return strings.TrimPrefix(names[0], "/")
	}
	return ""
}

// addr formats an address, "" for the zero one.
func addr(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// Inspect returns the container's configuration and runtime state.
func (b *Backend) Inspect(ctx context.Context, id string) (backends.ContainerDetails, error) {
	res, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return backends.ContainerDetails{}, wrap(err, "inspect container %s", id)
	}
	return details(res.Container), nil
}

func details(r container.InspectResponse) backends.ContainerDetails {
	d := backends.ContainerDetails{
		Container: backends.Container{
			ID:           r.ID,
			Name:         strings.TrimPrefix(r.Name, "/"),
			ImageID:      r.Image,
			Command:      strings.Join(append([]string{r.Path}, r.Args...), " "),
			Created:      parseTime(r.Created),
			RestartCount: r.RestartCount,
		},
	}
	if c := r.Config; c != nil {
		d.Image = c.Image
		d.Labels = c.Labels
		d.Config = backends.ContainerConfig{
			Hostname: c.Hostname, Domainname: c.Domainname, User: c.User,
			Env: c.Env, Cmd: c.Cmd, Entrypoint: c.Entrypoint, WorkingDir: c.WorkingDir,
			TTY: c.Tty, OpenStdin: c.OpenStdin, StopSignal: c.StopSignal, StopTimeout: c.StopTimeout,
			Healthcheck: specHealthcheck(c.Healthcheck),
		}
	}
	if h := r.HostConfig; h != nil {
		d.Config.Privileged = h.Privileged
		d.Config.Init = h.Init != nil && *h.Init
		d.Config.RestartPolicy = spec.RestartPolicy{Name: string(h.RestartPolicy.Name), MaxRetries: h.RestartPolicy.MaximumRetryCount}
		if d.Config.RestartPolicy.Name == "" {
			d.Config.RestartPolicy.Name = spec.RestartNo
		}
	}
	if s := r.State; s != nil {
		d.State = backends.State(s.Status)
		d.ExitCode = s.ExitCode
		d.Pid = s.Pid
		d.StartedAt = parseTime(s.StartedAt)
		d.FinishedAt = parseTime(s.FinishedAt)
		d.OOMKilled = s.OOMKilled
		d.Error = s.Error
		if s.Health != nil {
			d.Health = healthString(s.Health.Status)
			for _, l := range s.Health.Log {
				if l != nil {
					d.HealthLog = append(d.HealthLog, backends.HealthResult{Start: l.Start, End: l.End, ExitCode: l.ExitCode, Output: l.Output})
				}
			}
		}
	}
	d.Mounts = mountPoints(r.Mounts)
	if ns := r.NetworkSettings; ns != nil {
		d.Ports = portBindings(ns.Ports)
		d.Networks = map[string]backends.EndpointInfo{}
		for name, ep := range ns.Networks {
			if ep != nil {
				d.Networks[name] = endpointInfo(ep)
			}
		}
	}
	return d
}

func mountPoints(ms []container.MountPoint) []backends.MountPoint {
	var out []backends.MountPoint
	for _, m := range ms {
		out = append(out, backends.MountPoint{Type: string(m.Type), Name: m.Name, Source: m.Source, Destination: m.Destination, ReadOnly: !m.RW})
	}
	return out
}

func endpointInfo(ep *network.EndpointSettings) backends.EndpointInfo {
	return backends.EndpointInfo{
		NetworkID:   ep.NetworkID,
		IPAddress:   addr(ep.IPAddress),
		IPPrefixLen: ep.IPPrefixLen,
		Gateway:     addr(ep.Gateway),
		MacAddress:  ep.MacAddress.String(),
		IPv6Address: addr(ep.GlobalIPv6Address),
		Aliases:     slices.Clone(ep.Aliases),
	}
}

func healthString(h container.HealthStatus) backends.Health {
	switch h {
	case container.Starting:
		return backends.HealthStarting
	case container.Healthy:
		return backends.HealthHealthy
	case container.Unhealthy:
		return backends.HealthUnhealthy
	}
	return backends.HealthNone
}

func specHealthcheck(h *container.HealthConfig) *spec.Healthcheck {
	if h == nil || len(h.Test) == 0 {
		return nil
	}
	if len(h.Test) == 1 && h.Test[0] == "NONE" {
		return &spec.Healthcheck{Disable: true}
	}
	out := &spec.Healthcheck{Test: slices.Clone(h.Test)}
	dur := func(d time.Duration) *spec.Duration {
		if d == 0 {
			return nil
		}
		return spec.DurationOf(d)
	}
	out.Interval = dur(h.Interval)
	out.Timeout = dur(h.Timeout)
	out.StartPeriod = dur(h.StartPeriod)
	out.StartInterval = dur(h.StartInterval)
	if h.Retries != 0 {
		r := h.Retries
		out.Retries = &r
	}
	return out
}

func portBindings(pm network.PortMap) []backends.PortBinding {
	var out []backends.PortBinding
	for port, binds := range pm {
		for _, b := range binds {
			var hp int
			_, _ = fmt.Sscanf(b.HostPort, "%d", &hp) // none published (empty): 0
			out = append(out, backends.PortBinding{HostIP: addr(b.HostIP), HostPort: hp, ContainerPort: int(port.Num()), Protocol: string(port.Proto())})
		}
	}
	backends.SortPorts(out)
	return out
}

// parseTime reads Docker's RFC 3339 timestamps; the zero time
// ("0001-01-01T00:00:00Z") and garbage give time.Time{}.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}
