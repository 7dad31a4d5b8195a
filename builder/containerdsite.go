package builder

import (
	"context"
	"fmt"
	"strings"

	"github.com/distribution/reference"
	bkclient "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"

	"github.com/cornus-dev/cornus/backends"
)

// containerdSite is a buildkitd containerd worker on the backend's own
// containerd: it sees the backend's images (bases resolve there first)
// and stores results there, unpacked, with BuildKit's image exporter.
type containerdSite struct {
	d *buildkitd
	c *bkclient.Client
}

func newContainerdSite(ctx context.Context, cs backends.ContainerdSite, environ []string) (*containerdSite, error) {
	d, err := startBuildkitd(ctx, environ, containerdWorker(cs))
	if err != nil {
		return nil, err
	}
	c, err := bkclient.New(ctx, d.address())
	if err != nil {
		_ = d.close()
		return nil, fmt.Errorf("connect to buildkitd: %w", err)
	}
	return &containerdSite{d: d, c: c}, nil
}

func (s *containerdSite) build(ctx context.Context, j job, src *source, r run) (string, error) {
	return solve(ctx, s, j, src, r)
}

func (s *containerdSite) client(context.Context) (*bkclient.Client, error) { return s.c, nil }

func (s *containerdSite) prepare(context.Context, job, *source, map[string]string) error { return nil }

func (s *containerdSite) export(_ context.Context, tags []string) export {
	// containerd's image store takes names as they are: give them in the
	// full form every client looks them up by.
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t
		if n, err := reference.ParseNormalizedNamed(t); err == nil {
			names[i] = reference.TagNameOnly(n).String()
		}
	}
	return export{
		entries: []bkclient.ExportEntry{{Type: bkclient.ExporterImage, Attrs: map[string]string{"name": strings.Join(names, ","), "unpack": "true"}}},
		finish: func(_ context.Context, r *bkclient.SolveResponse) (string, error) {
			return r.ExporterResponse[exptypes.ExporterImageConfigDigestKey], nil
		},
		abort: func(error) {},
	}
}

func (s *containerdSite) close() error {
	err := s.c.Close()
	if derr := s.d.close(); err == nil {
		err = derr
	}
	return err
}
