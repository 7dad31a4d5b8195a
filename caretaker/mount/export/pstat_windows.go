package export

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/windows"
)

// sysAttr fills a from what this system says beyond fs.FileInfo: on
// Windows the three times; the mode is windowsMode's; owners are root.
func sysAttr(fi fs.FileInfo, mask *p9.AttrMask, a *p9.Attr) {
	a.Mode = windowsMode(fi.Mode())
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		a.ATimeSeconds, a.ATimeNanoSeconds = filetime(d.LastAccessTime)
		a.MTimeSeconds, a.MTimeNanoSeconds = filetime(d.LastWriteTime)
		a.CTimeSeconds, a.CTimeNanoSeconds = filetime(d.LastWriteTime)
		a.BTimeSeconds, a.BTimeNanoSeconds = filetime(d.CreationTime)
		mask.BTime = true
	}
}

func filetime(ft syscall.Filetime) (sec, nsec uint64) {
	ns := ft.Nanoseconds()
	return uint64(ns / 1e9), uint64(ns % 1e9)
}

// fileID: Windows' FileInfo carries no file number (os.SameFile opens the
// file to get one); QIDs come from paths (pathID).
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// fileLimit: Windows has no per-process descriptor limit to respect.
func fileLimit() int64 { return maxNodes }

// statFS describes the volume holding the open directory f.
func statFS(f *os.File) (p9.FSStat, error) {
	var avail, total, free uint64
	name, err := windows.UTF16PtrFromString(f.Name())
	if err != nil {
		return p9.FSStat{}, err
	}
	if err := windows.GetDiskFreeSpaceEx(name, &avail, &total, &free); err != nil {
		return p9.FSStat{}, err
	}
	const bs = 4096
	return p9.FSStat{Type: v9fsMagic, BlockSize: bs, Blocks: total / bs, BlocksFree: free / bs, BlocksAvailable: avail / bs, NameLength: maxName}, nil
}

// mknodAt: this system makes no FIFO or socket below a descriptor.
func mknodAt(*os.Root, string, uint32) error { return linux.EPERM }
