package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// Volumes lists the project's volumes (compose volumes), by name.
func (e *Engine) Volumes(ctx context.Context, project string) ([]backends.Volume, error) {
	vs, err := e.b.ListVolumes(ctx, backends.ListOptions{Labels: projectLabels(project)})
	if err != nil {
		return nil, fmt.Errorf("volumes of project %s: %w", project, err)
	}
	slices.SortFunc(vs, func(a, b backends.Volume) int { return strings.Compare(a.Name, b.Name) })
	return vs, nil
}
