package dockerapi

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/dockerapi/createbody"
	"github.com/cornus-dev/cornus/internal/statustext"
	"github.com/cornus-dev/cornus/spec"
)

// summary renders a container as GET /containers/json does.
func summary(c backends.Container) container.Summary {
	s := container.Summary{
		ID: c.ID, Names: []string{"/" + c.Name}, Image: c.Image, ImageID: c.ImageID, Command: c.Command,
		Created: c.Created.Unix(), Labels: c.Labels, State: container.ContainerState(c.State), Status: statustext.Docker(c, time.Now()),
		Ports:           []container.PortSummary{},
		NetworkSettings: &container.NetworkSettingsSummary{Networks: map[string]*network.EndpointSettings{}},
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.HostConfig.NetworkMode = "bridge"
	for name, ep := range c.Networks {
		s.NetworkSettings.Networks[name] = endpointSettings(c.Name, ep)
		s.HostConfig.NetworkMode = name
	}
	s.Mounts = mountPoints(c.Mounts)
	for _, p := range c.Ports {
		ps := container.PortSummary{PrivatePort: uint16(p.ContainerPort), PublicPort: uint16(p.HostPort), Type: p.Protocol}
		if p.HostPort != 0 {
			ip := p.HostIP
			if ip == "" {
				ip = "0.0.0.0"
			}
			ps.IP, _ = netip.ParseAddr(ip)
		}
		s.Ports = append(s.Ports, ps)
	}
	if c.Health != "" {
		s.Health = &container.HealthSummary{Status: container.HealthStatus(c.Health)}
	}
	return s
}

// inspect renders a container as GET /containers/{id}/json does, with what
// clients read: State (incl. Health), Config, NetworkSettings, Mounts,
// Created, Name.
func inspect(d backends.ContainerDetails, autoRemove bool) container.InspectResponse {
	cfg := d.Config
	argv := append(slices.Clone(cfg.Entrypoint), cfg.Cmd...)
	out := container.InspectResponse{
		ID: d.ID, Created: timeString(d.Created), Name: "/" + d.Name, Image: d.ImageID,
		RestartCount: d.RestartCount, Driver: "overlay2", Platform: "linux",
		State: &container.State{
			Status: container.ContainerState(d.State), Running: d.Running(),
			Paused: d.State == backends.StatePaused, Restarting: d.State == backends.StateRestarting, Dead: d.State == backends.StateDead,
			OOMKilled: d.OOMKilled, Pid: d.Pid, ExitCode: d.ExitCode, Error: d.Error,
			StartedAt: timeString(d.StartedAt), FinishedAt: timeString(d.FinishedAt),
		},
		Config: &container.Config{
			Hostname: cfg.Hostname, Domainname: cfg.Domainname, User: cfg.User, Env: cfg.Env, Cmd: cfg.Cmd,
			Entrypoint: cfg.Entrypoint, WorkingDir: cfg.WorkingDir, Tty: cfg.TTY, OpenStdin: cfg.OpenStdin,
			Image: d.Image, Labels: d.Labels, StopSignal: cfg.StopSignal, StopTimeout: cfg.StopTimeout,
			ExposedPorts: network.PortSet{},
		},
		HostConfig: &container.HostConfig{
			NetworkMode: "bridge", AutoRemove: autoRemove, Privileged: cfg.Privileged, PortBindings: network.PortMap{},
			RestartPolicy: createbody.RestartPolicy(cfg.RestartPolicy),
		},
		NetworkSettings: &container.NetworkSettings{Ports: network.PortMap{}, Networks: map[string]*network.EndpointSettings{}},
	}
	if len(argv) > 0 {
		out.Path, out.Args = argv[0], argv[1:]
	}
	if out.Config.Labels == nil {
		out.Config.Labels = map[string]string{}
	}
	if cfg.Init {
		out.HostConfig.Init = &cfg.Init
	}
	if h := cfg.Healthcheck; h != nil {
		out.Config.Healthcheck = &container.HealthConfig{Test: h.Test, Interval: durOf(h.Interval), Timeout: durOf(h.Timeout), StartPeriod: durOf(h.StartPeriod), StartInterval: durOf(h.StartInterval)}
		if h.Retries != nil {
			out.Config.Healthcheck.Retries = *h.Retries
		}
	}
	if d.Health != "" {
		health := &container.Health{Status: container.HealthStatus(d.Health), Log: []*container.HealthcheckResult{}}
		for _, r := range d.HealthLog {
			health.Log = append(health.Log, &container.HealthcheckResult{Start: r.Start, End: r.End, ExitCode: r.ExitCode, Output: r.Output})
		}
		for i := len(d.HealthLog) - 1; i >= 0 && d.HealthLog[i].ExitCode != 0; i-- {
			health.FailingStreak++
		}
		out.State.Health = health
	}
	for _, p := range d.Ports {
		port, ok := network.PortFrom(uint16(p.ContainerPort), network.IPProtocol(p.Protocol))
		if !ok {
			continue
		}
		out.Config.ExposedPorts[port] = struct{}{}
		if p.HostPort == 0 {
			if _, seen := out.NetworkSettings.Ports[port]; !seen {
				out.NetworkSettings.Ports[port] = nil
			}
			continue
		}
		b := network.PortBinding{HostPort: strconv.Itoa(p.HostPort)}
		ip := p.HostIP
		if ip == "" {
			ip = "0.0.0.0"
		}
		b.HostIP, _ = netip.ParseAddr(ip)
		out.NetworkSettings.Ports[port] = append(out.NetworkSettings.Ports[port], b)
		out.HostConfig.PortBindings[port] = append(out.HostConfig.PortBindings[port], b)
	}
	for name, ep := range d.Networks {
		out.NetworkSettings.Networks[name] = endpointSettings(d.Name, ep)
		out.HostConfig.NetworkMode = container.NetworkMode(name)
	}
	out.Mounts = mountPoints(d.Mounts)
	return out
}

func endpointSettings(name string, ep backends.EndpointInfo) *network.EndpointSettings {
	es := &network.EndpointSettings{NetworkID: ep.NetworkID, Aliases: ep.Aliases, IPPrefixLen: ep.IPPrefixLen, DNSNames: append([]string{name}, ep.Aliases...)}
	es.IPAddress, _ = netip.ParseAddr(ep.IPAddress)
	es.Gateway, _ = netip.ParseAddr(ep.Gateway)
	es.GlobalIPv6Address, _ = netip.ParseAddr(ep.IPv6Address)
	if mac, err := net.ParseMAC(ep.MacAddress); err == nil {
		es.MacAddress = network.HardwareAddr(mac)
	}
	return es
}

func mountPoints(ms []backends.MountPoint) []container.MountPoint {
	out := []container.MountPoint{}
	for _, m := range ms {
		out = append(out, container.MountPoint{Type: mount.Type(m.Type), Name: m.Name, Source: m.Source, Destination: m.Destination, RW: !m.ReadOnly})
	}
	return out
}

func durOf(d *spec.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Std()
}

// timeString is Docker's timestamp format; the zero time is
// "0001-01-01T00:00:00Z" as dockerd writes it.
func timeString(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// pathStat renders a backend path stat for the X-Docker-Container-Path-Stat
// header.
func pathStat(p backends.PathStat) container.PathStat {
	return container.PathStat{Name: p.Name, Size: p.Size, Mode: os.FileMode(p.Mode), Mtime: p.Mtime, LinkTarget: p.LinkTarget}
}
