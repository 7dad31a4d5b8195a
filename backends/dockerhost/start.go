package dockerhost

import (
	"context"
	"fmt"
	"regexp"

	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// Start starts a created or stopped container.
func (b *Backend) Start(ctx context.Context, id string) error {
	_, err := b.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	if err != nil && staleTask.MatchString(err.Error()) {
		return fmt.Errorf("start container %s: %w: %w", id, backends.ErrStaleTask, err)
	}
	return wrap(err, "start container %s", id)
}

// staleTask matches dockerd's answers (500s, unclassed) when containerd
// still holds a task for the container: killed between creating and
// starting the task, dockerd forgets it but containerd does not, and every
// later start fails with "task ID: already exists" — or, when the shim's
// bundle directory survived, "failed to start shim: mkdir …/ID: file
// exists".
var staleTask = regexp.MustCompile(`\btask [0-9a-f]{12,64}: already exists|failed to start shim: mkdir \S*/io\.containerd\.runtime\.v2\.task/\S+: file exists`)
