//go:build linux

package export

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// maxDirBuf bounds one getdents buffer, whatever count the peer asks for.
const maxDirBuf = 1 << 20

// Readdir implements p9.File: entries of the open directory from the
// position offset (0, or an entry's Offset from an earlier call), at most
// about count bytes of them. "." and ".." are left out.
func (n *node) Readdir(offset uint64, count uint32) (_ p9.Dirents, err error) {
	defer wire(&err)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.open < 0 || n.typ != unix.S_IFDIR {
		return nil, unix.EBADF
	}
	if _, err := unix.Seek(n.open, int64(offset), io.SeekStart); err != nil {
		return nil, err
	}
	buf := make([]byte, min(max(int(count), 4096), maxDirBuf))
	for {
		m, err := unix.Getdents(n.open, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return nil, io.EOF
		}
		ents := n.parseDirents(buf[:m])
		if len(ents) > 0 {
			return ents, nil
		}
		// Only hidden entries in this batch: read on.
	}
}

// parseDirents decodes linux_dirent64 records, stopping at the first one
// that does not fit (the kernel never writes one; it is not trusted).
func (n *node) parseDirents(b []byte) p9.Dirents {
	var ents p9.Dirents
	for len(b) >= 19 {
		ino := binary.NativeEndian.Uint64(b[0:])
		off := binary.NativeEndian.Uint64(b[8:])
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		typ := b[18]
		name := b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		s := string(name)
		if checkName(s) != nil || !n.visible(s) {
			continue
		}
		// Type carries the d_type itself, as Linux v9fs expects.
		ents = append(ents, p9.Dirent{QID: p9.QID{Type: dtQIDType(typ), Path: ino}, Offset: off, Type: p9.QIDType(typ), Name: s})
	}
	return ents
}

func dtQIDType(t uint8) p9.QIDType {
	switch t {
	case unix.DT_DIR:
		return p9.TypeDir
	case unix.DT_LNK:
		return p9.TypeSymlink
	}
	return p9.TypeRegular
}
