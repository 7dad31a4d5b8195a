//go:build !linux

package export

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/containerd/errdefs"
)

// errNoExport: the export confines its peer with openat2(2), which only
// Linux has; a portable confinement (issue 27) is not there yet.
var errNoExport = fmt.Errorf("serving a client-local mount from %s is not supported yet (the export is Linux's): "+
	"run the client on Linux, or bind a directory of the server's host: %w", runtime.GOOS, errdefs.ErrNotImplemented)

// Supported says why this system cannot export.
func Supported() error { return errNoExport }

// Serve refuses off Linux (and closes conn).
func Serve(_ context.Context, conn io.ReadWriteCloser, _ string, _ Options) error {
	conn.Close()
	return errNoExport
}

// ServeFile refuses off Linux (and closes conn).
func ServeFile(_ context.Context, conn io.ReadWriteCloser, _ string, _ Options) error {
	conn.Close()
	return errNoExport
}
