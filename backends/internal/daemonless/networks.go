package daemonless

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/journal"
)

// Networks are CNI bridges kept by backends/internal/localstore, their
// labels in <data>/networks.

// EnsureNetwork returns the network, creating it if missing.
func (c *Core) EnsureNetwork(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	return c.nets.Ensure(ctx, n)
}

// ListNetworks lists networks whose labels match.
func (c *Core) ListNetworks(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	return c.nets.List(ctx, o)
}

// RemoveNetwork removes a network no container is on.
func (c *Core) RemoveNetwork(ctx context.Context, id string) error {
	return c.nets.Remove(ctx, id)
}

// Connect attaches a container with its own network namespace to one more
// network (docker network connect).
func (c *Core) Connect(ctx context.Context, network, container string, aliases []string) error {
	st, err := c.Store().Find(ctx, container)
	if err != nil {
		return err
	}
	if st.Netns == "" || st.Spec.Network.Kind != "" {
		return fmt.Errorf("container %s has no network namespace of its own to connect: %w", st.Name, errdefs.ErrFailedPrecondition)
	}
	res, err := c.Net.Attach(ctx, cni.AttachOptions{ContainerID: st.ID, Netns: st.Netns, Names: []string{st.Name},
		Networks: []cni.Endpoint{{Network: network, Aliases: append([]string{st.Spec.App}, aliases...)}}})
	if err != nil {
		return err
	}
	if st.Networks == nil {
		st.Networks = map[string]backends.EndpointInfo{}
	}
	for _, a := range res.Attachments {
		st.Networks[a.Network] = backends.EndpointInfo{NetworkID: a.Network, IPAddress: a.IP.String(), IPPrefixLen: a.PrefixLen,
			Gateway: a.Gateway.String(), MacAddress: a.MAC, Aliases: a.Aliases}
	}
	if err := c.Store().Write(st); err != nil {
		return err
	}
	_ = c.journal().Append(journalNetworkEvent("connect", st.ID))
	return nil
}

// Disconnect detaches a container from a network.
func (c *Core) Disconnect(ctx context.Context, network, container string, force bool) error {
	st, err := c.Store().Find(ctx, container)
	if err != nil {
		return err
	}
	if _, err := c.Net.Detach(ctx, cni.DetachOptions{ContainerID: st.ID, Netns: st.Netns, Networks: []string{network}}); err != nil {
		return err
	}
	delete(st.Networks, network)
	if err := c.Store().Write(st); err != nil {
		return err
	}
	_ = c.journal().Append(journalNetworkEvent("disconnect", st.ID))
	return nil
}

// journalNetworkEvent is a connect or disconnect: the container's ID
// only (EventOptions.Networks).
func journalNetworkEvent(action, id string) journal.Event {
	return journal.Event{Action: action, ID: id}
}
