package dockerhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
)

// PullImage pulls ref from its registry, reporting progress.
func (b *Backend) PullImage(ctx context.Context, ref string, progress func(backends.PullProgress)) error {
	rc, err := b.cli.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return wrap(err, "pull image %s", ref)
	}
	defer rc.Close()
	return wrap(decodePull(rc, progress), "pull image %s", ref)
}

// decodePull reads the daemon's JSON message stream; an error message in
// it fails the pull.
func decodePull(r io.Reader, progress func(backends.PullProgress)) error {
	return decodeMessages(r, func(m jsonstream.Message) {
		if progress == nil {
			return
		}
		p := backends.PullProgress{ID: m.ID, Status: m.Status}
		if m.Progress != nil {
			p.Current, p.Total = m.Progress.Current, m.Progress.Total
		}
		progress(p)
	})
}

// decodeMessages calls fn for each message of a JSON message stream and
// returns the first error message the stream carries.
func decodeMessages(r io.Reader, fn func(jsonstream.Message)) error {
	dec := json.NewDecoder(r)
	for {
		var m jsonstream.Message
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read progress stream: %w", err)
		}
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
		fn(m)
	}
}
