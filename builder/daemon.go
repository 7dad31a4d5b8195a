package builder

import (
	"context"
	"fmt"
	"net"
	"strings"

	controlapi "github.com/moby/buildkit/api/services/control"
	bkclient "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
)

// daemonSite is a runtime's own BuildKit (dockerd's), reached through the
// runtime's API as docker buildx's docker driver reaches it. It sees the
// runtime's images, so bases need no preparing; results are stored with
// the "moby" exporter.
type daemonSite struct {
	c    *bkclient.Client
	dial func(ctx context.Context, path, proto string, meta map[string][]string) (net.Conn, error)
}

func newDaemonSite(ctx context.Context, dial func(ctx context.Context, path, proto string, meta map[string][]string) (net.Conn, error)) (*daemonSite, error) {
	c, err := bkclient.New(ctx, "",
		bkclient.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return dial(ctx, "/grpc", "h2c", nil)
		}),
		bkclient.WithSessionDialer(func(ctx context.Context, proto string, meta map[string][]string) (net.Conn, error) {
			return dial(ctx, "/session", proto, meta)
		}))
	if err != nil {
		return nil, fmt.Errorf("connect to the runtime's BuildKit: %w", err)
	}
	return &daemonSite{c: c, dial: dial}, nil
}

func (s *daemonSite) build(ctx context.Context, j job, src *source, r run) (string, error) {
	return solve(ctx, s, j, src, r)
}

func (s *daemonSite) client(context.Context) (*bkclient.Client, error) { return s.c, nil }

func (s *daemonSite) prepare(context.Context, job, *source, map[string]string) error { return nil }

func (s *daemonSite) export(_ context.Context, tags []string) export {
	return export{
		entries: []bkclient.ExportEntry{{Type: "moby", Attrs: map[string]string{"name": strings.Join(tags, ",")}}},
		finish: func(_ context.Context, r *bkclient.SolveResponse) (string, error) {
			return r.ExporterResponse[exptypes.ExporterImageDigestKey], nil // the image ID
		},
		abort: func(error) {},
	}
}

func (s *daemonSite) close() error { return s.c.Close() }

func (s *daemonSite) grpcConn(ctx context.Context) (net.Conn, error) {
	return s.dial(ctx, "/grpc", "h2c", nil)
}

func (s *daemonSite) sessionConn(ctx context.Context, proto string, meta map[string][]string) (net.Conn, error) {
	return s.dial(ctx, "/session", proto, meta)
}

// solveRequest takes a solve as it is: dockerd's own exporter ("moby",
// what buildx asks a Docker Engine for) stores in its store.
func (s *daemonSite) solveRequest(*controlapi.SolveRequest) {}
