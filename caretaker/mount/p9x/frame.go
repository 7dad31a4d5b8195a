package p9x

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// The 9P frame: size[4] type[1] tag[2], then the body; little-endian.
const headerLen = 7

// Message types: Tlistdir and its reply take numbers 9P2000.L and the
// p9 library's own extensions leave unused.
const (
	msgRlerror  = 7
	msgTlistdir = 222
	msgRlistdir = 223
)

const (
	// Tags of Tlistdir requests: the top of the tag space, which the p9
	// client (tags allocated from 1 up, reused as they free) never reaches
	// with the few hundred requests a mount keeps in flight.
	extTagFirst = 0xFF00
	extTagLast  = 0xFFFE
	// MaxEntries bounds the entries of one Rlistdir.
	MaxEntries = 512
	// maxRequest bounds a Tlistdir frame (a path and two numbers).
	maxRequest = headerLen + 2 + 4096 + 8 + 2
)

// Dirent is one entry of a listing, with its attributes.
type Dirent struct {
	Name   string
	Offset uint64 // where a listing resumes after this entry
	Type   uint8  // the d_type
	Entry
}

// Entry is one name's attributes, or the error a walk to it would get.
type Entry struct {
	Err  linux.Errno
	QID  p9.QID
	Mask p9.AttrMask
	Attr p9.Attr
}

var errShort = errors.New("9P extension: short message")

type header struct {
	size uint32
	typ  uint8
	tag  uint16
}

func parseHeader(b []byte) header {
	return header{size: binary.LittleEndian.Uint32(b), typ: b[4], tag: binary.LittleEndian.Uint16(b[5:])}
}

// peekHeader reads the next frame's header without consuming it; a
// connection ending inside one is an unexpected EOF.
func peekHeader(br *bufio.Reader) (header, error) {
	b, err := br.Peek(headerLen)
	if err != nil {
		if len(b) > 0 && err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return header{}, err
	}
	return parseHeader(b), nil
}

func isExtTag(tag uint16) bool { return tag >= extTagFirst && tag <= extTagLast }

// frame starts a message: its header with the size filled in by done.
func frame(typ uint8, tag uint16) []byte {
	b := make([]byte, headerLen, 256)
	b[4] = typ
	binary.LittleEndian.PutUint16(b[5:], tag)
	return b
}

func done(b []byte) []byte {
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

func putString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// decoder reads a body, remembering the first overrun.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) take(n int) []byte {
	if d.bad || len(d.b) < n {
		d.bad = true
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() uint8   { return d.take(1)[0] }
func (d *decoder) u16() uint16 { return binary.LittleEndian.Uint16(d.take(2)) }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.take(4)) }
func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.take(8)) }
func (d *decoder) str() string { return string(d.take(int(d.u16()))) }

func (d *decoder) err() error {
	if d.bad {
		return errShort
	}
	return nil
}
