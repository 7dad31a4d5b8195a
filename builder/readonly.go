package builder

import (
	"context"
	"fmt"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
)

// readOnly is a backend's content store as a build may see it: read, never
// written or deleted, whatever the builder on the other end of the session
// asks.
type readOnly struct{ content.Store }

var errReadOnly = fmt.Errorf("the backend's image store is read-only to builds: %w", errdefs.ErrPermissionDenied)

func (readOnly) Update(context.Context, content.Info, ...string) (content.Info, error) {
	return content.Info{}, errReadOnly
}

func (readOnly) Delete(context.Context, digest.Digest) error { return errReadOnly }

func (readOnly) Writer(context.Context, ...content.WriterOpt) (content.Writer, error) {
	return nil, errReadOnly
}

func (readOnly) Abort(context.Context, string) error { return errReadOnly }
