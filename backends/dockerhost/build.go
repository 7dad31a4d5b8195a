package dockerhost

import (
	"context"
	"net"

	"github.com/cornus-dev/cornus/backends"
)

var _ backends.Builder = (*Backend)(nil)

// BuildSite is dockerd's own BuildKit, reached as docker buildx's docker
// driver reaches it: its /grpc and /session endpoints, upgraded to h2c.
// What it builds lands in dockerd's image store.
func (b *Backend) BuildSite(ctx context.Context) (backends.BuildSite, error) {
	return backends.BuildSite{Dial: func(ctx context.Context, path, proto string, meta map[string][]string) (net.Conn, error) {
		return b.cli.DialHijack(ctx, path, proto, meta)
	}}, nil
}
