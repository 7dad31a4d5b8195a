package caretaker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount"
	"github.com/cornus-dev/cornus/caretaker/mount/pin"
	"github.com/cornus-dev/cornus/server/api"
)

// sharedPath is a path below SharedDir.
func sharedPath(elem ...string) string {
	return filepath.Join(append([]string{SharedDir}, elem...)...)
}

// mounted is what mountAll set up, undone by unmountAll.
type mounted struct {
	fs   []mount.FS
	pins []*pin.Pin
}

// mountAll is the mount role: each client-local mount, opened on the
// relay (the server forwards it to the client's session, which serves
// it over 9P), is mounted (kernel 9p, else FUSE) under SharedDir/mounts/<index>. The
// shared volume is bound rshared, so the mount shows at the volume's
// path on the runtime's host, where the app's rslave bind takes it. A
// single file is pinned (package mount/pin) at SharedDir/pins/<index>-<file>,
// which the app binds instead: the runtime resolves the bind's source on
// its host, where the client could have made the file a symlink. Pinned
// at every start of the companion, before it is ready (a file that is no
// longer a regular file fails it). It returns what it set up, also on
// error.
func mountAll(ctx context.Context, relay *serverRelay, mounts []Mount, log *slog.Logger) (mounted, error) {
	var out mounted
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
		out.fs = append(out.fs, fs)
		log.Info("mounted", "index", m.Index, "at", dir, "readOnly", m.ReadOnly, "kind", mount.Kind())
		if m.File == "" {
			continue
		}
		pn, err := pinFile(dir, m)
		if err != nil {
			return out, fmt.Errorf("mount %d: %w", m.Index, err)
		}
		out.pins = append(out.pins, pn)
		log.Info("pinned", "index", m.Index, "file", m.File, "at", pn.Pinned())
	}
	return out, nil
}

// pinFile pins m's single file of the mount at dir and returns the pin,
// which follows an edit by rename. A pin a killed predecessor left is
// removed first.
func pinFile(dir string, m Mount) (*pin.Pin, error) {
	pinned := sharedPath(pinnedFile(m.Index, m.File))
	if err := os.MkdirAll(filepath.Dir(pinned), 0o700); err != nil {
		return nil, err
	}
	if err := pin.Remove(pinned); err != nil {
		return nil, err
	}
	return pin.Follow(filepath.Join(dir, m.File), pinned, time.Second)
}

// unmountAll removes the pins and unmounts what mountAll mounted (both
// propagate to the runtime's host and to the app), and removes the
// mountpoints.
func unmountAll(ms mounted, log *slog.Logger) {
	var errs []error
	for _, p := range ms.pins {
		errs = append(errs, p.Remove())
	}
	for _, fs := range ms.fs {
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
