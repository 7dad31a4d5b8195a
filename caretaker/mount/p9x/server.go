package p9x

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"github.com/hugelgupf/p9/linux"
)

// ListDir answers a Tlistdir: at most max entries of the directory dir,
// a path from the export's root ("" for the root), from offset, each with
// its attributes as a walk to it would find them; the directory's own QID
// path; and whether the listing ends there. An error is the directory's
// own (not found, not a directory, refused).
type ListDir func(dir string, offset uint64, max int) (dirPath uint64, ents []Dirent, eof bool, err error)

// listBusy bounds the Tlistdir requests a connection answers at once; the
// connection is not read further while they are all busy.
const listBusy = 8

// Serve wraps the exporting end's connection for the p9 server: frames
// written whole, reads buffered, and Tlistdir answered by list.
func Serve(conn io.ReadWriteCloser, list ListDir) io.ReadWriteCloser {
	return &serverConn{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), w: writer{w: conn}, list: list, busy: make(chan struct{}, listBusy)}
}

type serverConn struct {
	conn io.ReadWriteCloser
	br   *bufio.Reader
	w    writer
	list ListDir
	busy chan struct{}
	left int // bytes of the current p9 frame still to read
}

// Read implements io.Reader for the p9 server, which reads one frame at a
// time; Tlistdir frames between its frames are taken out and answered.
func (c *serverConn) Read(p []byte) (int, error) {
	for c.left == 0 {
		h, err := peekHeader(c.br)
		if err != nil {
			return 0, err
		}
		if h.typ != msgTlistdir {
			c.left = int(h.size)
			break
		}
		if h.size < headerLen || h.size > maxRequest {
			return 0, fmt.Errorf("9P extension: Tlistdir of %d bytes", h.size)
		}
		f := make([]byte, h.size)
		if _, err := io.ReadFull(c.br, f); err != nil {
			return 0, err
		}
		c.busy <- struct{}{}
		go c.answer(h.tag, f[headerLen:])
	}
	n, err := c.br.Read(p[:min(len(p), c.left)])
	c.left -= n
	return n, err
}

func (c *serverConn) answer(tag uint16, body []byte) {
	defer func() { <-c.busy }()
	var reply []byte
	dir, offset, max, err := decodeTlistdir(body)
	if err != nil {
		reply = encodeRlerror(tag, linux.EINVAL)
	} else {
		path, ents, eof, err := c.list(dir, offset, max)
		if len(ents) > max {
			ents, eof = ents[:max], false
		}
		reply = encodeRlistdir(tag, Errno(err), path, eof, ents)
	}
	_ = c.w.frame(reply) // a failed write fails the connection, seen by the reads
}

func (c *serverConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *serverConn) Close() error                { return c.conn.Close() }

func encodeRlerror(tag uint16, e linux.Errno) []byte {
	b := frame(msgRlerror, tag)
	b = append(b, byte(e), byte(e>>8), byte(e>>16), byte(e>>24))
	return done(b)
}

// Errno is err as a 9P error number (0 for nil), EIO when it carries none.
func Errno(err error) linux.Errno {
	if err == nil {
		return 0
	}
	e := linux.ExtractErrno(err)
	if e == 0 || uint64(e) > math.MaxUint32 {
		return linux.EIO
	}
	return e
}
