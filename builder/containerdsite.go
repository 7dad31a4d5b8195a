package builder

import (
	"context"
	"fmt"
	"net"
	"strings"

	controlapi "github.com/moby/buildkit/api/services/control"
	bkclient "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/imageref"
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
	return export{
		entries: []bkclient.ExportEntry{{Type: bkclient.ExporterImage, Attrs: map[string]string{"name": fullNames(tags), "unpack": "true"}}},
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

// fullNames are tags in the full form every client looks them up by
// (containerd's image store takes names as they are), comma-joined.
func fullNames(tags []string) string {
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = imageref.Full(strings.TrimSpace(t))
	}
	return strings.Join(names, ",")
}

func (s *containerdSite) grpcConn(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", s.d.sock)
}

func (s *containerdSite) sessionConn(ctx context.Context, proto string, meta map[string][]string) (net.Conn, error) {
	return s.c.Dialer()(ctx, proto, meta)
}

// solveRequest turns the exporter a Docker Engine client asks for
// ("moby", dockerd's store) into the image exporter on this containerd.
func (s *containerdSite) solveRequest(req *controlapi.SolveRequest) {
	if req.ExporterDeprecated == "moby" {
		req.ExporterDeprecated, req.ExporterAttrsDeprecated = bkclient.ExporterImage, mobyAsImage(req.ExporterAttrsDeprecated)
	}
	for _, e := range req.Exporters {
		if e.Type == "moby" {
			e.Type, e.Attrs = bkclient.ExporterImage, mobyAsImage(e.Attrs)
		}
	}
}

func mobyAsImage(attrs map[string]string) map[string]string {
	out := map[string]string{"unpack": "true"}
	for k, v := range attrs {
		out[k] = v
	}
	if n := attrs["name"]; n != "" {
		out["name"] = fullNames(strings.Split(n, ","))
	}
	return out
}
