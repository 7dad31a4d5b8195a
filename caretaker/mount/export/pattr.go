package export

import (
	"io/fs"

	"github.com/hugelgupf/p9/p9"
)

// attrOfInfo converts what Lstat said to 9P attributes: the system's own
// stat where it has one (sysAttr), else what fs.FileInfo carries.
func attrOfInfo(fi fs.FileInfo) (p9.AttrMask, p9.Attr) {
	mask := p9.AttrMask{Mode: true, NLink: true, UID: true, GID: true, ATime: true, MTime: true, CTime: true, Size: true, Blocks: true}
	mt := fi.ModTime()
	a := p9.Attr{
		Mode:             p9.ModeFromOS(fi.Mode()),
		NLink:            1,
		Size:             uint64(fi.Size()),
		BlockSize:        4096,
		Blocks:           (uint64(fi.Size()) + 511) / 512,
		ATimeSeconds:     uint64(mt.Unix()),
		ATimeNanoSeconds: uint64(mt.Nanosecond()),
		MTimeSeconds:     uint64(mt.Unix()),
		MTimeNanoSeconds: uint64(mt.Nanosecond()),
		CTimeSeconds:     uint64(mt.Unix()),
		CTimeNanoSeconds: uint64(mt.Nanosecond()),
	}
	sysAttr(fi, &mask, &a)
	return mask, a
}

// windowsMode is the mode a Windows file is shown with. Windows keeps no
// Unix permissions: everything is shown open to all (as Docker Desktop
// shows a Windows bind mount), so a container user of any uid can use the
// tree, and executable, so a script checked out on Windows runs; the
// read-only attribute alone takes the write bits away.
func windowsMode(m fs.FileMode) p9.FileMode {
	perm := p9.FileMode(0o777)
	if !m.IsDir() && m&0o200 == 0 {
		perm = 0o555
	}
	return p9.ModeFromOS(m)&p9.FileModeMask | perm
}

// v9fsMagic is the file system type shown where the system has no number
// of its own that Linux would understand.
const v9fsMagic = 0x01021997
