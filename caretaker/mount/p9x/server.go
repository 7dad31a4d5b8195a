package p9x

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"github.com/hugelgupf/p9/linux"
)

// StatDir answers a Tstatdir: the attributes of names in the directory
// dir, a path from the export's root ("" for the root), each as a walk to
// it would find it, and the directory's own QID path. An error is the
// directory's own (not found, not a directory, refused).
type StatDir func(dir string, names []string) (dirPath uint64, ents []Entry, err error)

// statBusy bounds the Tstatdir requests a connection answers at once; the
// connection is not read further while they are all busy.
const statBusy = 8

// Serve wraps the exporting end's connection for the p9 server: frames
// written whole, reads buffered, and Tstatdir answered by stat.
func Serve(conn io.ReadWriteCloser, stat StatDir) io.ReadWriteCloser {
	return &serverConn{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), w: writer{w: conn}, stat: stat, busy: make(chan struct{}, statBusy)}
}

type serverConn struct {
	conn io.ReadWriteCloser
	br   *bufio.Reader
	w    writer
	stat StatDir
	busy chan struct{}
	left int // bytes of the current p9 frame still to read
}

// Read implements io.Reader for the p9 server, which reads one frame at a
// time; Tstatdir frames between its frames are taken out and answered.
func (c *serverConn) Read(p []byte) (int, error) {
	for c.left == 0 {
		b, err := c.br.Peek(headerLen)
		if err != nil {
			if len(b) > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		h := parseHeader(b)
		if h.typ != msgTstatdir {
			c.left = int(h.size)
			break
		}
		if h.size < headerLen || h.size > maxRequest {
			return 0, fmt.Errorf("9P extension: Tstatdir of %d bytes", h.size)
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
	dir, names, err := decodeTstatdir(body)
	if err != nil {
		reply = encodeRlerror(tag, linux.EINVAL)
	} else {
		path, ents, err := c.stat(dir, names)
		reply = encodeRstatdir(tag, Errno(err), path, ents)
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
