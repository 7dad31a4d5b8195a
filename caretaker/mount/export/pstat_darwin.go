package export

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// sysAttr fills a from the stat behind fi.
func sysAttr(fi fs.FileInfo, mask *p9.AttrMask, a *p9.Attr) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	mask.RDev, mask.INo, mask.BTime = true, true, true
	a.Mode = p9.FileMode(st.Mode)
	a.UID, a.GID, a.NLink, a.RDev = p9.UID(st.Uid), p9.GID(st.Gid), p9.NLink(st.Nlink), p9.Dev(st.Rdev)
	a.BlockSize, a.Blocks = uint64(st.Blksize), uint64(st.Blocks)
	a.ATimeSeconds, a.ATimeNanoSeconds = uint64(st.Atimespec.Sec), uint64(st.Atimespec.Nsec)
	a.MTimeSeconds, a.MTimeNanoSeconds = uint64(st.Mtimespec.Sec), uint64(st.Mtimespec.Nsec)
	a.CTimeSeconds, a.CTimeNanoSeconds = uint64(st.Ctimespec.Sec), uint64(st.Ctimespec.Nsec)
	a.BTimeSeconds, a.BTimeNanoSeconds = uint64(st.Birthtimespec.Sec), uint64(st.Birthtimespec.Nsec)
}

// fileID is the device and inode fi names.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

// statFS describes the file system holding the open directory f.
func statFS(f *os.File) (p9.FSStat, error) {
	var s unix.Statfs_t
	if err := fstatfs(f, &s); err != nil {
		return p9.FSStat{}, err
	}
	return p9.FSStat{
		Type: v9fsMagic, BlockSize: s.Bsize, Blocks: s.Blocks, BlocksFree: s.Bfree, BlocksAvailable: s.Bavail,
		Files: s.Files, FilesFree: s.Ffree, FSID: uint64(uint32(s.Fsid.Val[0])) | uint64(uint32(s.Fsid.Val[1]))<<32,
		NameLength: maxName,
	}, nil
}

// mknodAt: this system makes no FIFO or socket below a descriptor.
func mknodAt(*os.Root, string, uint32) error { return linux.EPERM }
