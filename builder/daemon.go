package builder

import (
	"context"
	"fmt"
	"net"
	"strings"

	bkclient "github.com/moby/buildkit/client"
)

// daemonSite is a runtime's own BuildKit (dockerd's), reached through the
// runtime's API as docker buildx's docker driver reaches it. It sees the
// runtime's images, so bases need no preparing; results are stored with
// the "moby" exporter.
type daemonSite struct {
	c *bkclient.Client
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
	return &daemonSite{c: c}, nil
}

func (s *daemonSite) client(context.Context) (*bkclient.Client, error) { return s.c, nil }

func (s *daemonSite) prepare(context.Context, job, *source) error { return nil }

func (s *daemonSite) exports(tags []string) ([]bkclient.ExportEntry, func(context.Context, *bkclient.SolveResponse) (string, error)) {
	return []bkclient.ExportEntry{{Type: "moby", Attrs: map[string]string{"name": strings.Join(tags, ",")}}},
		func(_ context.Context, r *bkclient.SolveResponse) (string, error) {
			return r.ExporterResponse["containerimage.digest"], nil
		}
}

func (s *daemonSite) close() error { return s.c.Close() }
