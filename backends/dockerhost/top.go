package dockerhost

import (
	"context"
	"strings"

	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Top lists the container's processes; psArgs are ps options ("" = -ef).
func (b *Backend) Top(ctx context.Context, id string, psArgs string) (backends.Processes, error) {
	res, err := b.cli.ContainerTop(ctx, id, client.ContainerTopOptions{Arguments: strings.Fields(psArgs)})
	if err != nil {
		return backends.Processes{}, wrap(err, "top of container %s", id)
	}
	return backends.Processes{Titles: res.Titles, Processes: res.Processes}, nil
}
