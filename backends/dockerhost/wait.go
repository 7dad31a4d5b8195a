package dockerhost

import (
	"context"
	"errors"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Wait blocks until the container is not running and returns its exit
// code.
func (b *Backend) Wait(ctx context.Context, id string) (int, error) {
	w := b.cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case res := <-w.Result:
		if res.Error != nil && res.Error.Message != "" {
			return int(res.StatusCode), wrap(errors.New(res.Error.Message), "wait for container %s", id)
		}
		return int(res.StatusCode), nil
	case err := <-w.Error:
		return 0, wrap(err, "wait for container %s", id)
	}
}
