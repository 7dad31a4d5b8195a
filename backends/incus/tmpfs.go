package incus

import (
	"fmt"
	"os"
	"strings"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/hostpolicy"
)

// A tmpfs volume (the local driver's type=tmpfs, as Docker makes one) is
// an Incus custom volume whose directory on incusd's host holds a tmpfs
// the backend mounts there: every instance that binds the volume shares
// it, its files never reach the pool's disk, and it goes with the volume.
// Incus has no tmpfs volume of its own; its unix socket is this backend's
// only way to incusd, so incusd's host is this one.

// tmpfsOptions reads a tmpfs volume's options: its mount flags and data
// (the o option, as Docker passes it to mount(2)); false for another
// volume.
func tmpfsOptions(o map[string]string) (flags uintptr, data string, ok bool, err error) {
	m := hostpolicy.LocalDriverMount(o)
	if m.Kind != hostpolicy.MountTmpfs {
		return 0, "", false, nil
	}
	// Never a set-user-ID program nor a device node from a volume.
	flags = unix.MS_NOSUID | unix.MS_NODEV
	var keep []string
	for opt := range strings.SplitSeq(m.Options, ",") {
		key, _, _ := strings.Cut(opt, "=")
		switch key {
		case "":
		case "ro":
			flags |= unix.MS_RDONLY
		case "noexec":
			flags |= unix.MS_NOEXEC
		case "nosuid", "nodev", "rw", "exec", "suid", "dev", "defaults":
			// nosuid and nodev always; rw, exec are the defaults.
		case "size", "nr_blocks", "nr_inodes", "mode", "uid", "gid", "huge", "mpol":
			keep = append(keep, opt)
		default:
			return 0, "", true, fmt.Errorf("tmpfs volume option %q: the incus backend takes size, nr_blocks, nr_inodes, mode, uid, gid, huge, mpol, ro and noexec: %w", opt, errdefs.ErrInvalidArgument)
		}
	}
	return flags, strings.Join(keep, ","), true, nil
}

// mountVolumeTmpfs mounts a tmpfs volume's tmpfs at dir, its directory on the
// pool, unless one is there (a volume made earlier, or by another apply).
// After a reboot of the host the directory is empty: mounted again before
// anything binds it, never used as disk.
func mountVolumeTmpfs(dir string, o map[string]string) error {
	flags, data, ok, err := tmpfsOptions(o)
	if !ok || err != nil {
		return err
	}
	if onTmpfs(dir) {
		return nil
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, data); err != nil {
		return fmt.Errorf("tmpfs volume: mount a tmpfs at %s (incusd's host must be this one): %w", dir, err)
	}
	return nil
}

// unmountVolumeTmpfs unmounts what mountVolumeTmpfs mounted at dir, before Incus
// removes the directory. Lazily: an instance that still binds it keeps
// its files until it goes.
func unmountVolumeTmpfs(dir string, o map[string]string) error {
	if _, _, ok, _ := tmpfsOptions(o); !ok || !onTmpfs(dir) {
		return nil
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("tmpfs volume: unmount %s: %w", dir, err)
	}
	return nil
}

// onTmpfs reports whether dir is the root of a tmpfs mount: a directory
// on the pool's disk below one would say tmpfs too, so its parent's
// device must differ.
func onTmpfs(dir string) bool {
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) != nil || fs.Type != unix.TMPFS_MAGIC {
		return false
	}
	var st, parent unix.Stat_t
	if unix.Stat(dir, &st) != nil || unix.Stat(dir+"/..", &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}
