package dockerhost

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/statustext"
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
	sortPorts(c.Ports)
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
