package fuse

import (
	"errors"

	"github.com/cornus-dev/cornus/caretaker/mount/mountinfo"
)

// Sweep detaches every cornus FUSE mount at or below dir and aborts its
// connection: what a process that died (kill -9) left mounted, whose
// serving side is gone. It returns the mountpoints it detached.
func Sweep(dir string) ([]string, error) {
	mounts, err := mountinfo.Below(dir, fsType)
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	// Deepest first: a mount below another goes before it.
	for i := len(mounts) - 1; i >= 0; i-- {
		m := mounts[i]
		if err := lazyUnmount(m.Point); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = abort(m.Minor) // best effort: detached already
		done = append(done, m.Point)
	}
	return done, errors.Join(errs...)
}

// Mounted lists the cornus FUSE mountpoints at or below dir in this mount
// namespace.
func Mounted(dir string) ([]string, error) { return mountinfo.Points(dir, fsType, fsName) }
