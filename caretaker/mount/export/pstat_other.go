//go:build !linux && !darwin && !windows

package export

import (
	"io/fs"
	"os"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// sysAttr: fs.FileInfo's attributes only on this system.
func sysAttr(fs.FileInfo, *p9.AttrMask, *p9.Attr) {}

// fileID: no inode numbers here; QIDs come from paths.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

func fileLimit() int64 { return maxNodes }

func statFS(*os.File) (p9.FSStat, error) {
	return p9.FSStat{Type: v9fsMagic, BlockSize: 4096, NameLength: maxName}, nil
}

// mknodAt: this system makes no FIFO or socket below a descriptor.
func mknodAt(*os.Root, string, uint32) error { return linux.EPERM }
