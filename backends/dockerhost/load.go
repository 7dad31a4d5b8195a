package dockerhost

import (
	"context"
	"io"
	"strings"

	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"
)

// LoadImage imports a docker-archive or OCI-layout tar and returns the
// references it created ("Loaded image: X", or the ID for untagged
// images).
func (b *Backend) LoadImage(ctx context.Context, tar io.Reader) ([]string, error) {
	rc, err := b.cli.ImageLoad(ctx, tar, client.ImageLoadWithQuiet(true))
	if err != nil {
		return nil, wrap(err, "load image")
	}
	defer rc.Close()
	refs, err := loadedRefs(rc)
	return refs, wrap(err, "load image")
}

// loadedRefs parses the load stream's "Loaded image: X" and "Loaded image
// ID: X" lines.
func loadedRefs(r io.Reader) ([]string, error) {
	var refs []string
	err := decodeMessages(r, func(m jsonstream.Message) {
		for _, line := range strings.Split(m.Stream, "\n") {
			line = strings.TrimSpace(line)
			for _, prefix := range []string{"Loaded image ID: ", "Loaded image: "} {
				if ref, ok := strings.CutPrefix(line, prefix); ok && ref != "" {
					refs = append(refs, ref)
					break
				}
			}
		}
	})
	return refs, err
}
