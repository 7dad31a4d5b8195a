package dockerhost

import (
	"context"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

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
