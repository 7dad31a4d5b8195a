package fuse

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cornus-dev/cornus/caretaker/mount/mountinfo"
)

// How cornus's FUSE mounts show in the mount table: type and source.
const (
	fsType = "fuse." + fsName
	fsName = "cornus"
)

// errNotMounted: the mountpoint has no FUSE mount of ours.
var errNotMounted = errors.New("no cornus FUSE mount")

// fuseConn finds the FUSE connection number of the cornus mount at
// mountpoint (the minor device number in /proc/self/mountinfo; fusectl
// names connections by it). The last (topmost) mount wins.
func fuseConn(mountpoint string) (uint64, error) {
	mounts, err := mountinfo.Read()
	if err != nil {
		return 0, err
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		if m := mounts[i]; m.Point == mountpoint && m.FSType == fsType {
			return m.Minor, nil
		}
	}
	return 0, errNotMounted
}

// escapeMountinfo escapes as the kernel does for mountinfo fields.
func escapeMountinfo(s string) string {
	r := strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", `\012`, `\`, `\134`)
	return r.Replace(s)
}

// IsMounted reports whether a cornus FUSE mount is at mountpoint in this
// mount namespace.
func IsMounted(mountpoint string) bool {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return false
	}
	_, err = fuseConn(abs)
	return err == nil
}

// lazyUnmount detaches the mount even while it is busy.
func lazyUnmount(mountpoint string) error {
	err := syscall.Unmount(mountpoint, syscall.MNT_DETACH)
	if err == nil || err == syscall.EINVAL { // EINVAL: not mounted (any more)
		return nil
	}
	bin, lerr := exec.LookPath("fusermount3")
	if lerr != nil {
		if bin, lerr = exec.LookPath("fusermount"); lerr != nil {
			return err
		}
	}
	if out, err := exec.Command(bin, "-u", "-z", mountpoint).CombinedOutput(); err != nil {
		return fmt.Errorf("%s -u -z: %w: %s", filepath.Base(bin), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// abort ends FUSE connection dev through fusectl: the serve loop stops and
// every process still using a file on it gets ENOTCONN. When fusectl is
// not mounted (and we may mount), it is mounted privately for the write.
func abort(dev uint64) error {
	const ctl = "/sys/fs/fuse/connections"
	name := filepath.Join(strconv.FormatUint(dev, 10), "abort")
	err := os.WriteFile(filepath.Join(ctl, name), []byte("1"), 0)
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	dir, err := os.MkdirTemp("", "cornus-fusectl-")
	if err != nil {
		return err
	}
	defer os.Remove(dir)
	if err := syscall.Mount("fusectl", dir, "fusectl", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount fusectl: %w", err)
	}
	defer func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) }() // best effort: the abort is what matters
	return os.WriteFile(filepath.Join(dir, name), []byte("1"), 0)
}
