package podman

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
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
	if _, err := b.cli.call(ctx, request{method: "GET", path: "/containers/json", query: q}, &entries); err != nil {
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
	sortPorts(c.Ports)
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
