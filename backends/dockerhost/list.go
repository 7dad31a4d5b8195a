package dockerhost

import (
	"context"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// List returns containers whose labels match every filter label.
func (b *Backend) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: o.All, Filters: labelFilters(o.Labels)})
	if err != nil {
		return nil, wrap(err, "list containers")
	}
	out := make([]backends.Container, 0, len(res.Items))
	for _, s := range res.Items {
		out = append(out, summary(s))
	}
	slices.SortFunc(out, func(a, b backends.Container) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// labelFilters turns ListOptions.Labels into Docker label filters:
// key=value, or key alone when the value is "".
func labelFilters(labels map[string]string) client.Filters {
	f := client.Filters{}
	for _, k := range sortedNames(labels) {
		if v := labels[k]; v != "" {
			f.Add("label", k+"="+v)
		} else {
			f.Add("label", k)
		}
	}
	return f
}

var (
	exitedRE = regexp.MustCompile(`^Exited \((-?\d+)\)`)
	healthRE = regexp.MustCompile(`\((healthy|unhealthy|health: starting)\)$`)
)

func summary(s container.Summary) backends.Container {
	c := backends.Container{
		ID: s.ID, Name: containerName(s.Names), Image: s.Image, ImageID: s.ImageID,
		Command: s.Command, Labels: s.Labels, State: string(s.State), Status: s.Status,
		Created: time.Unix(s.Created, 0),
	}
	// API 1.41 has no Health field in the summary: read it from Status.
	if s.Health != nil {
		c.Health = healthString(s.Health.Status)
	} else if m := healthRE.FindStringSubmatch(s.Status); m != nil {
		c.Health = healthString(container.HealthStatus(strings.TrimPrefix(m[1], "health: ")))
	}
	if m := exitedRE.FindStringSubmatch(s.Status); m != nil {
		c.ExitCode, _ = strconv.Atoi(m[1])
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
