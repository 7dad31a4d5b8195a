package podman

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/imageref"
)

// Export returns a tar of the container's filesystem (podman export).
// The container's storage is mounted for it: kept apart from builds as
// a copy is.
func (b *Backend) Export(ctx context.Context, id string) (io.ReadCloser, error) {
	release, err := b.guard(ctx, classThreadEnding)
	if err != nil {
		return nil, fmt.Errorf("export container %s: %w", id, err)
	}
	resp, err := b.cli.do(ctx, request{method: "GET", path: "/containers/" + url.PathEscape(id) + "/export"})
	if err != nil {
		release()
		return nil, fmt.Errorf("export container %s: %w", id, err)
	}
	return guardedBody{resp.Body, release}, nil
}

// Commit makes an image of the container (podman commit), in Docker's
// image format as docker commit writes: an OCI image would drop the
// author and message.
func (b *Backend) Commit(ctx context.Context, id string, o backends.CommitOptions) (string, error) {
	q := url.Values{"container": {id}, "format": {"docker"}, "pause": {strconv.FormatBool(!o.NoPause)}}
	if o.Reference != "" {
		name, tag, err := imageref.NameTag(o.Reference)
		if err != nil {
			return "", fmt.Errorf("commit container %s: %w", id, err)
		}
		q.Set("repo", name)
		q.Set("tag", tag)
	}
	if o.Author != "" {
		q.Set("author", o.Author)
	}
	if o.Message != "" {
		q.Set("comment", o.Message)
	}
	for _, c := range o.Changes {
		q.Add("changes", c)
	}
	release, err := b.guard(ctx, classThreadEnding)
	if err != nil {
		return "", fmt.Errorf("commit container %s: %w", id, err)
	}
	defer release()
	var out struct {
		ID string `json:"Id"`
	}
	if err := b.cli.call(ctx, request{method: "POST", path: "/commit", query: q}, &out); err != nil {
		return "", fmt.Errorf("commit container %s: %w", id, err)
	}
	return "sha256:" + out.ID, nil
}
