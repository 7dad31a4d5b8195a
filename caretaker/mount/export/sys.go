//go:build linux

package export

import (
	"errors"
	"strconv"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// beneath resolves a name inside a directory fd and never follows a
// symlink, not even a trailing one (with O_PATH|O_NOFOLLOW that yields the
// link itself).
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens one name below dirfd. It retries EINTR and EAGAIN (a
// concurrent rename made the kernel give up on the lookup).
func openBeneath(dirfd int, name string, flags int, mode uint32) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: beneath}
	for range 16 {
		fd, err := unix.Openat2(dirfd, name, how)
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// reopen opens the inode an O_PATH fd already names, through its
// /proc/self/fd magic link: the link names that exact inode, so nothing is
// resolved by path again. Only regular files and directories get here.
func (t *tree) reopen(fd int, flags int) (int, error) {
	for range 16 {
		nfd, err := unix.Openat(t.procfd, strconv.Itoa(fd), flags|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return nfd, err
		}
	}
	return -1, unix.EINTR
}

// procPath is the magic link naming fd, for the calls that take no fd.
func procPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// statMask is what GetAttr reports.
const statMask = unix.STATX_BASIC_STATS | unix.STATX_BTIME

// statFD describes the inode fd names (an O_PATH fd is fine), never
// following a symlink.
func statFD(fd int) (unix.Statx_t, error) {
	var st unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, statMask, &st)
	return st, err
}

// statAt describes name in dirfd, never following a symlink.
func statAt(dirfd int, name string) (unix.Statx_t, error) {
	var st unix.Statx_t
	err := unix.Statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, statMask, &st)
	return st, err
}

// attrOf converts statx output to 9P attributes.
func attrOf(st *unix.Statx_t) (p9.AttrMask, p9.Attr) {
	mask := p9.AttrMask{Mode: true, NLink: true, UID: true, GID: true, RDev: true, ATime: true, MTime: true, CTime: true, INo: true, Size: true, Blocks: true}
	a := p9.Attr{
		Mode:             p9.FileMode(st.Mode),
		UID:              p9.UID(st.Uid),
		GID:              p9.GID(st.Gid),
		NLink:            p9.NLink(st.Nlink),
		RDev:             p9.Dev(unix.Mkdev(st.Rdev_major, st.Rdev_minor)),
		Size:             st.Size,
		BlockSize:        uint64(st.Blksize),
		Blocks:           st.Blocks,
		ATimeSeconds:     uint64(st.Atime.Sec),
		ATimeNanoSeconds: uint64(st.Atime.Nsec),
		MTimeSeconds:     uint64(st.Mtime.Sec),
		MTimeNanoSeconds: uint64(st.Mtime.Nsec),
		CTimeSeconds:     uint64(st.Ctime.Sec),
		CTimeNanoSeconds: uint64(st.Ctime.Nsec),
	}
	if st.Mask&unix.STATX_BTIME != 0 {
		mask.BTime = true
		a.BTimeSeconds, a.BTimeNanoSeconds = uint64(st.Btime.Sec), uint64(st.Btime.Nsec)
	}
	return mask, a
}

// fileType is the S_IFMT part of a mode.
func fileType(mode uint16) uint32 { return uint32(mode) & unix.S_IFMT }

// wire keeps an errno exact on the wire: the p9 server maps errors
// matching os.ErrPermission, os.ErrExist… to one errno each (EPERM would
// go out as EACCES, ENOTEMPTY as EEXIST), but passes its own Errno type
// through unchanged.
func wire(err *error) {
	var e unix.Errno
	if errors.As(*err, &e) {
		*err = linux.Errno(e)
	}
}
