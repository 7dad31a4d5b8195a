package engine

import (
	"context"
	"fmt"
	"io"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
)

// Export returns a tar of the filesystem of the container o names, its
// first replica unless o.Index says (compose export).
func (e *Engine) Export(ctx context.Context, project string, o CopyOptions) (io.ReadCloser, error) {
	ex, err := backends.Want[backends.Exporter](e.b, backends.FeatureExport, "export")
	if err != nil {
		return nil, err
	}
	cs, err := e.replicas(ctx, project, o)
	if err != nil {
		return nil, err
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: cs[0].Name, Status: "Exporting", Done: true})
	rc, err := ex.Export(ctx, cs[0].ID)
	if err != nil {
		e.failed(ctx, cs[0].Name, err)
		return nil, fmt.Errorf("export %s: %w", cs[0].Name, err)
	}
	return rc, nil
}

// Commit makes an image of the container o names, its first replica
// unless o.Index says (compose commit), and returns the image's ID.
func (e *Engine) Commit(ctx context.Context, project string, o CopyOptions, c backends.CommitOptions) (string, error) {
	cm, err := backends.Want[backends.Committer](e.b, backends.FeatureCommit, "commit")
	if err != nil {
		return "", err
	}
	cs, err := e.replicas(ctx, project, o)
	if err != nil {
		return "", err
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: cs[0].Name, Status: "Committing"})
	id, err := cm.Commit(ctx, cs[0].ID, c)
	if err != nil {
		e.failed(ctx, cs[0].Name, err)
		return "", fmt.Errorf("commit %s: %w", cs[0].Name, err)
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: cs[0].Name, Status: "Committed", Text: "as " + id, Done: true})
	return id, nil
}
