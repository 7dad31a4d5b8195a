package p9x

import (
	"encoding/binary"
	"fmt"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// Tlistdir: path[s] offset[8] max[2], path being the directory from the
// export's root ("" for the root, else names joined by "/"), offset where
// the listing resumes (0, or an entry's Offset), max the most entries
// wanted. Rlistdir: errno[4] dirpath[8] eof[1] nentries[2]
// nentries*(name[s] offset[8] type[1] entry): errno the directory's own
// (then no entries), dirpath the QID path of the directory found, for the
// client to check it is the one it lists, eof set when no entry follows.

func encodeTlistdir(tag uint16, dir string, offset uint64, max int) []byte {
	b := putString(frame(msgTlistdir, tag), dir)
	b = binary.LittleEndian.AppendUint64(b, offset)
	b = binary.LittleEndian.AppendUint16(b, uint16(max))
	return done(b)
}

func decodeTlistdir(body []byte) (dir string, offset uint64, max int, err error) {
	d := &decoder{b: body}
	dir = d.str()
	offset = d.u64()
	max = int(d.u16())
	if max > MaxEntries {
		return "", 0, 0, fmt.Errorf("9P extension: %d entries asked in a Tlistdir, at most %d", max, MaxEntries)
	}
	return dir, offset, max, d.err()
}

func encodeRlistdir(tag uint16, dirErr linux.Errno, dirPath uint64, eof bool, ents []Dirent) []byte {
	b := frame(msgRlistdir, tag)
	b = binary.LittleEndian.AppendUint32(b, uint32(dirErr))
	b = binary.LittleEndian.AppendUint64(b, dirPath)
	b = append(b, boolByte(eof))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(ents)))
	for i := range ents {
		e := &ents[i]
		b = putString(b, e.Name)
		b = binary.LittleEndian.AppendUint64(b, e.Offset)
		b = append(b, e.Type)
		b = appendEntry(b, &e.Entry)
	}
	return done(b)
}

func decodeRlistdir(body []byte) (dirErr linux.Errno, dirPath uint64, eof bool, ents []Dirent, err error) {
	d := &decoder{b: body}
	dirErr = linux.Errno(d.u32())
	dirPath = d.u64()
	eof = d.u8() != 0
	n := int(d.u16())
	if n > MaxEntries {
		return 0, 0, false, nil, fmt.Errorf("9P extension: %d entries in an Rlistdir, at most %d", n, MaxEntries)
	}
	ents = make([]Dirent, n)
	for i := range ents {
		e := &ents[i]
		e.Name = d.str()
		e.Offset = d.u64()
		e.Type = d.u8()
		readEntry(d, &e.Entry)
	}
	return dirErr, dirPath, eof, ents, d.err()
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendEntry(b []byte, e *Entry) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(e.Err))
	if e.Err != 0 {
		return b
	}
	b = append(b, uint8(e.QID.Type))
	b = binary.LittleEndian.AppendUint32(b, e.QID.Version)
	b = binary.LittleEndian.AppendUint64(b, e.QID.Path)
	b = binary.LittleEndian.AppendUint32(b, maskBits(e.Mask))
	a := &e.Attr
	for _, v := range []uint32{uint32(a.Mode), uint32(a.UID), uint32(a.GID)} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, v := range attrWords(a) {
		b = binary.LittleEndian.AppendUint64(b, *v)
	}
	return b
}

func readEntry(d *decoder, e *Entry) {
	e.Err = linux.Errno(d.u32())
	if e.Err != 0 {
		return
	}
	e.QID.Type = p9.QIDType(d.u8())
	e.QID.Version = d.u32()
	e.QID.Path = d.u64()
	e.Mask = maskOf(d.u32())
	a := &e.Attr
	a.Mode, a.UID, a.GID = p9.FileMode(d.u32()), p9.UID(d.u32()), p9.GID(d.u32())
	for _, v := range attrWords(a) {
		*v = d.u64()
	}
}

// attrWords are the 64-bit fields of a, in wire order.
func attrWords(a *p9.Attr) []*uint64 {
	return []*uint64{(*uint64)(&a.NLink), (*uint64)(&a.RDev), &a.Size, &a.BlockSize, &a.Blocks,
		&a.ATimeSeconds, &a.ATimeNanoSeconds, &a.MTimeSeconds, &a.MTimeNanoSeconds,
		&a.CTimeSeconds, &a.CTimeNanoSeconds, &a.BTimeSeconds, &a.BTimeNanoSeconds}
}

// maskFields are AttrMask's fields, in wire bit order.
func maskFields(m *p9.AttrMask) []*bool {
	return []*bool{&m.Mode, &m.NLink, &m.UID, &m.GID, &m.RDev, &m.ATime, &m.MTime, &m.CTime,
		&m.INo, &m.Size, &m.Blocks, &m.BTime, &m.Gen, &m.DataVersion}
}

func maskBits(m p9.AttrMask) uint32 {
	var bits uint32
	for i, f := range maskFields(&m) {
		if *f {
			bits |= 1 << i
		}
	}
	return bits
}

func maskOf(bits uint32) p9.AttrMask {
	var m p9.AttrMask
	for i, f := range maskFields(&m) {
		*f = bits&(1<<i) != 0
	}
	return m
}
