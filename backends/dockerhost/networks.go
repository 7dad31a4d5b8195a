package dockerhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/hostlock"
	"github.com/cornus-dev/cornus/spec"
)

// settleDelay is the least time a creator waits for networks created at
// the same moment by other processes to register before it decides which
// one is kept (dockerd 20.10 checks duplicate names non-atomically, and
// not at all without the CheckDuplicate flag this client no longer sends).
const settleDelay = 100 * time.Millisecond

// EnsureNetwork returns the network labelled for (project, key), creating
// it if missing. External networks must exist.
func (b *Backend) EnsureNetwork(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	name := n.RuntimeName()
	if n.Network.External {
		return b.externalNetwork(ctx, name)
	}
	b.ensureMu.Lock()
	defer b.ensureMu.Unlock()
	unlock, err := hostlock.Lock(ctx, b.lockDir, b.networkLock(), nil)
	if err != nil {
		return backends.Network{}, fmt.Errorf("ensure network %s: wait for another cornus creating networks on %s: %w", name, b.host, err)
	}
	defer unlock()

	// Found by docker compose's labels (cornus writes both families), so a
	// network docker compose created for the project is the same network.
	identity := map[string]string{backends.ComposeProject: n.Project, backends.ComposeNetwork: n.Key}
	if found, err := b.oldestNetwork(ctx, identity); err != nil || found != nil {
		if err != nil {
			return backends.Network{}, fmt.Errorf("ensure network %s: %w", name, err)
		}
		return b.inspectNetwork(ctx, found.ID)
	}
	// A network with the name but not our labels belongs to someone else.
	if err := b.checkNameFree(ctx, name, n.Project, n.Key); err != nil {
		return backends.Network{}, err
	}
	return b.createNetwork(ctx, name, n, identity)
}

// externalNetwork is a network the project declares external: it must
// exist.
func (b *Backend) externalNetwork(ctx context.Context, name string) (backends.Network, error) {
	res, err := b.cli.NetworkInspect(ctx, name, client.NetworkInspectOptions{})
	if errdefs.IsNotFound(err) {
		return backends.Network{}, fmt.Errorf("network %s is declared external but does not exist; create it first (docker network create %s): %w", name, name, errdefs.ErrNotFound)
	}
	if err != nil {
		return backends.Network{}, wrap(err, "inspect external network %s", name)
	}
	return networkOf(res.Network.Network, res.Network.Containers), nil
}

// createNetwork creates the project's network name, and settles races with
// other processes creating it at the same time: one network stays.
func (b *Backend) createNetwork(ctx context.Context, name string, n backends.NetworkSpec, identity map[string]string) (backends.Network, error) {
	opts, err := networkCreateOptions(n, identity)
	if err != nil {
		return backends.Network{}, fmt.Errorf("create network %s: %w", name, err)
	}
	begin := time.Now()
	created, err := b.cli.NetworkCreate(ctx, name, opts)
	// Creations in flight elsewhere become visible when they finish; ours
	// took took, theirs take about as long.
	took := max(time.Since(begin), settleDelay)
	for attempt := 1; err != nil; attempt++ {
		// Another process may be creating this network (a name conflict, or
		// a 403 "pool overlaps" for a fixed subnet): wait for theirs to
		// appear. Without a fixed subnet, "pool overlaps" more likely means
		// dockerd 20.10 handed the same free pool to a concurrent creation
		// of some other network: then creating again picks another pool.
		wait := settleDelay
		if errdefs.IsConflict(err) || errdefs.IsPermissionDenied(err) {
			wait = max(5*time.Second, 3*took)
		}
		retry := errdefs.IsPermissionDenied(err) && len(n.Network.Subnets) == 0 && attempt < 5
		if retry {
			wait = 2 * took
		}
		found, ferr := b.awaitNetwork(ctx, identity, wait)
		if ferr == nil && found != nil {
			return b.inspectNetwork(ctx, found.ID)
		}
		if !retry {
			return backends.Network{}, wrap(err, "create network %s", name)
		}
		created, err = b.cli.NetworkCreate(ctx, name, opts)
	}
	// Keep the oldest of concurrent twins; remove ours if it is not. A
	// twin created just before ours may take longer to finish and show:
	// ours is only kept once a second look, later, still finds it oldest.
	var winner *network.Summary
	for look := 1; look <= 2; look++ {
		settle(ctx, time.Duration(look)*took)
		if winner, err = b.oldestNetwork(ctx, identity); err != nil {
			return backends.Network{}, fmt.Errorf("ensure network %s: %w", name, err)
		}
		if winner != nil && winner.ID != created.ID {
			break
		}
	}
	if winner != nil && winner.ID != created.ID {
		if _, err := b.cli.NetworkRemove(ctx, created.ID, client.NetworkRemoveOptions{}); err != nil && !errdefs.IsNotFound(err) {
			return backends.Network{}, wrap(err, "remove duplicate network %s (%s)", name, created.ID)
		}
		return b.inspectNetwork(ctx, winner.ID)
	}
	return b.inspectNetwork(ctx, created.ID)
}

// networkLock names the host lock network creations on this daemon take:
// dockerd's duplicate-name check is not atomic, and concurrent creations
// of one network by several processes made twins that the label re-check
// did not always catch.
func (b *Backend) networkLock() string {
	sum := sha256.Sum256([]byte(b.host))
	return "dockerhost-networks-" + hex.EncodeToString(sum[:6]) + ".lock"
}

// awaitNetwork polls for the network labelled identity for up to wait.
func (b *Backend) awaitNetwork(ctx context.Context, identity map[string]string, wait time.Duration) (*network.Summary, error) {
	for deadline := time.Now().Add(wait); ; {
		settle(ctx, settleDelay)
		if found, err := b.oldestNetwork(ctx, identity); err == nil && found != nil {
			return found, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
	}
}

// settle waits d (or until ctx ends).
func settle(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

func networkCreateOptions(n backends.NetworkSpec, identity map[string]string) (client.NetworkCreateOptions, error) {
	labels := map[string]string{}
	maps.Copy(labels, n.Network.Labels)
	maps.Copy(labels, n.Labels)
	maps.Copy(labels, identity)
	labels[backends.LabelProject], labels[backends.LabelNetwork] = n.Project, n.Key
	opts := client.NetworkCreateOptions{
		Driver:     n.Network.Driver,
		Options:    maps.Clone(n.Network.DriverOpts),
		Internal:   n.Network.Internal,
		Attachable: n.Network.Attachable,
		Labels:     labels,
	}
	if n.Network.IPv6 {
		on := true
		opts.EnableIPv6 = &on
	}
	if len(n.Network.Subnets) > 0 {
		opts.IPAM = &network.IPAM{Driver: "default"}
		for i, s := range n.Network.Subnets {
			var c network.IPAMConfig
			var err error
			if c.Subnet, err = netip.ParsePrefix(s.Subnet); err != nil {
				return opts, invalid("networks.%s.subnets[%d].subnet: %q is not a CIDR", n.Key, i, s.Subnet)
			}
			if s.Gateway != "" {
				if c.Gateway, err = netip.ParseAddr(s.Gateway); err != nil {
					return opts, invalid("networks.%s.subnets[%d].gateway: %q is not an IP address", n.Key, i, s.Gateway)
				}
			}
			if s.IPRange != "" {
				if c.IPRange, err = netip.ParsePrefix(s.IPRange); err != nil {
					return opts, invalid("networks.%s.subnets[%d].ipRange: %q is not a CIDR", n.Key, i, s.IPRange)
				}
			}
			opts.IPAM.Config = append(opts.IPAM.Config, c)
		}
	}
	return opts, nil
}

// oldestNetwork returns the oldest network with the labels, or nil.
func (b *Backend) oldestNetwork(ctx context.Context, labels map[string]string) (*network.Summary, error) {
	res, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: labelFilters(labels)})
	if err != nil {
		return nil, wrap(err, "list networks")
	}
	if len(res.Items) == 0 {
		return nil, nil
	}
	oldest := slices.MinFunc(res.Items, func(a, b network.Summary) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return &oldest, nil
}

// checkNameFree fails with Conflict when a network called name exists
// without the project's labels.
func (b *Backend) checkNameFree(ctx context.Context, name, project, key string) error {
	res, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", name)})
	if err != nil {
		return wrap(err, "list networks named %s", name)
	}
	for _, n := range res.Items {
		if n.Name == name {
			return fmt.Errorf("network %s already exists but was not created by cornus for project %s (network key %s); remove it or declare it external: %w",
				name, project, key, errdefs.ErrConflict)
		}
	}
	return nil
}

func (b *Backend) inspectNetwork(ctx context.Context, id string) (backends.Network, error) {
	res, err := b.cli.NetworkInspect(ctx, id, client.NetworkInspectOptions{})
	if err != nil {
		return backends.Network{}, wrap(err, "inspect network %s", id)
	}
	return networkOf(res.Network.Network, res.Network.Containers), nil
}

func networkOf(n network.Network, containers map[string]network.EndpointResource) backends.Network {
	out := backends.Network{
		ID: n.ID, Name: n.Name, Driver: n.Driver, Labels: n.Labels,
		Internal: n.Internal, IPv6: n.EnableIPv6, Created: n.Created,
	}
	for _, c := range n.IPAM.Config {
		s := spec.Subnet{}
		if c.Subnet.IsValid() {
			s.Subnet = c.Subnet.String()
		}
		if c.Gateway.IsValid() {
			s.Gateway = c.Gateway.String()
		}
		if c.IPRange.IsValid() {
			s.IPRange = c.IPRange.String()
		}
		out.Subnets = append(out.Subnets, s)
	}
	if len(containers) > 0 {
		out.Containers = map[string]backends.EndpointInfo{}
		for id, ep := range containers {
			info := backends.EndpointInfo{NetworkID: n.ID, MacAddress: ep.MacAddress.String()}
			if ep.IPv4Address.IsValid() {
				info.IPAddress = ep.IPv4Address.Addr().String()
				info.IPPrefixLen = ep.IPv4Address.Bits()
			}
			if ep.IPv6Address.IsValid() {
				info.IPv6Address = ep.IPv6Address.Addr().String()
			}
			out.Containers[id] = info
		}
	}
	return out
}

// ListNetworks returns the networks whose labels match.
func (b *Backend) ListNetworks(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	res, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: labelFilters(o.Labels)})
	if err != nil {
		return nil, wrap(err, "list networks")
	}
	out := make([]backends.Network, 0, len(res.Items))
	for _, n := range res.Items {
		out = append(out, networkOf(n.Network, nil))
	}
	slices.SortFunc(out, func(a, b backends.Network) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// RemoveNetwork deletes a network by ID or name.
func (b *Backend) RemoveNetwork(ctx context.Context, id string) error {
	// dockerd releases a removed container's endpoint asynchronously: right
	// after a large teardown the network may still count it for a moment.
	for delay := 100 * time.Millisecond; ; delay *= 2 {
		_, err := b.cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
		if err == nil || !strings.Contains(err.Error(), "has active endpoints") {
			return wrap(err, "remove network %s", id)
		}
		if delay > 3*time.Second {
			return wrap(fmt.Errorf("%w (dockerd still counts endpoints of removed containers: restarting dockerd clears them)", err), "remove network %s", id)
		}
		select {
		case <-ctx.Done():
			return wrap(err, "remove network %s", id)
		case <-time.After(delay):
		}
	}
}

// Connect attaches a container to a network with extra DNS aliases.
func (b *Backend) Connect(ctx context.Context, networkName, containerID string, aliases []string) error {
	_, err := b.cli.NetworkConnect(ctx, networkName, client.NetworkConnectOptions{
		Container: containerID, EndpointConfig: &network.EndpointSettings{Aliases: aliases},
	})
	return wrap(err, "connect container %s to network %s", containerID, networkName)
}

// Disconnect detaches a container from a network.
func (b *Backend) Disconnect(ctx context.Context, networkName, containerID string, force bool) error {
	_, err := b.cli.NetworkDisconnect(ctx, networkName, client.NetworkDisconnectOptions{Container: containerID, Force: force})
	return wrap(err, "disconnect container %s from network %s", containerID, networkName)
}
