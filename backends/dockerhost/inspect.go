package dockerhost

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

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
			fmt.Sscanf(b.HostPort, "%d", &hp)
			out = append(out, backends.PortBinding{HostIP: addr(b.HostIP), HostPort: hp, ContainerPort: int(port.Num()), Protocol: string(port.Proto())})
		}
	}
	sortPorts(out)
	return out
}

func sortPorts(ps []backends.PortBinding) {
	slices.SortFunc(ps, func(a, b backends.PortBinding) int {
		if a.ContainerPort != b.ContainerPort {
			return a.ContainerPort - b.ContainerPort
		}
		if a.Protocol != b.Protocol {
			return strings.Compare(a.Protocol, b.Protocol)
		}
		if a.HostIP != b.HostIP {
			return strings.Compare(a.HostIP, b.HostIP)
		}
		return a.HostPort - b.HostPort
	})
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
