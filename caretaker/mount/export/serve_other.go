//go:build !linux

package export

import (
	"context"
	"io"
)

// serve confines with os.Root where there is no openat2(2).
func serve(ctx context.Context, conn io.ReadWriteCloser, root, only string, o Options) error {
	return servePortable(ctx, conn, root, only, o)
}
