package mount

import (
	"context"
	"errors"
	"io"

	"github.com/cornus-dev/cornus/caretaker/mount/fuse"
	"github.com/cornus-dev/cornus/caretaker/mount/kernel9p"
)

// FS is a mounted export.
type FS interface {
	// Mountpoint is where the export is mounted.
	Mountpoint() string
	// Unmount unmounts (lazily when busy, failing what is pending) and
	// closes the connection to the export; safe to call again.
	Unmount() error
}

// Options tune a mount.
type Options struct {
	// ReadOnly mounts read-only (the export refuses writes as well).
	ReadOnly bool
}

// Kind is how this host mounts exports: "9p" (the kernel's) or "fuse".
func Kind() string {
	if kernel9p.Available() {
		return "9p"
	}
	return "fuse"
}

// Mount mounts the 9P export reached over conn at dir, for every user of
// this host (a container's users) with the exporting user's rights: keep
// dir's parent private. The mount lives until Unmount, whatever becomes
// of ctx (which bounds the kernel's 9p handshake). conn is closed on
// failure.
func Mount(ctx context.Context, conn io.ReadWriteCloser, dir string, o Options) (FS, error) {
	if kernel9p.Available() {
		m, err := kernel9p.Mount(ctx, conn, dir, kernel9p.Options{ReadOnly: o.ReadOnly})
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	m, err := fuse.Mount(context.WithoutCancel(ctx), conn, dir, fuse.Options{ReadOnly: o.ReadOnly, AllowOther: true})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Mounted lists cornus's mounts (either kind) at or below dir in this
// mount namespace.
func Mounted(dir string) ([]string, error) {
	f, ferr := fuse.Mounted(dir)
	k, kerr := kernel9p.Mounted(dir)
	return append(f, k...), errors.Join(ferr, kerr)
}

// Sweep detaches cornus's mounts (either kind) at or below dir that a
// killed process left behind, and returns them.
func Sweep(dir string) ([]string, error) {
	f, ferr := fuse.Sweep(dir)
	k, kerr := kernel9p.Sweep(dir)
	return append(f, k...), errors.Join(ferr, kerr)
}
