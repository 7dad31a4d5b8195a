package caretaker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cornus-dev/cornus/caretaker/mount"
	"github.com/cornus-dev/cornus/server/api"
)

// sharedPath is a path below SharedDir.
func sharedPath(elem ...string) string {
	return filepath.Join(append([]string{SharedDir}, elem...)...)
}

// mountAll is the mount role: each client-local mount, opened on the
// relay (the server forwards it to the client's session, which serves
// it over 9P), is mounted (kernel 9p, else FUSE) under SharedDir/mounts/<index>. The
// shared volume is bound rshared, so the mount shows at the volume's
// path on the runtime's host, where the app's rslave bind takes it. It
// returns what it mounted, also on error.
func mountAll(ctx context.Context, relay *serverRelay, mounts []Mount, log *slog.Logger) ([]mount.FS, error) {
	var out []mount.FS
	for _, m := range mounts {
		dir := sharedPath(mountsSubdir, strconv.Itoa(m.Index))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return out, fmt.Errorf("mount %d: %w", m.Index, err)
		}
		conn, err := relay.Open(ctx, api.StreamHeader{Op: api.OpMount, Mount: &api.MountOpen{Index: m.Index}})
		if err != nil {
			return out, fmt.Errorf("mount %d: open the client's export: %w", m.Index, err)
		}
		// The mount lives until unmountAll, not until a request ends.
		fs, err := mount.Mount(ctx, conn, dir, mount.Options{ReadOnly: m.ReadOnly})
		if err != nil {
			return out, fmt.Errorf("mount %d: %w", m.Index, err)
		}
		out = append(out, fs)
		log.Info("mounted", "index", m.Index, "at", dir, "readOnly", m.ReadOnly, "kind", mount.Kind())
	}
	return out, nil
}

// unmountAll unmounts what mountAll mounted (the unmount propagates to
// the runtime's host and to the app) and removes the mountpoints.
func unmountAll(ms []mount.FS, log *slog.Logger) {
	var errs []error
	for _, fs := range ms {
		if err := fs.Unmount(); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = os.Remove(fs.Mountpoint())
	}
	if err := errors.Join(errs...); err != nil {
		log.Error("unmount", "error", err.Error())
	}
}
