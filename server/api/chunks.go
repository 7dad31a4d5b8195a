package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A build's file contents and secrets cross their streams in chunks,
// each a 4-byte big-endian length and that many bytes, ended by an empty
// chunk: the reader tells a whole payload from one its sender broke off
// (a read error half-way through a file), which a plain stream's end
// cannot.

// maxChunk bounds one chunk.
const maxChunk = 64 << 10

// ErrBrokenOff is a chunked payload that ended before its end chunk.
var ErrBrokenOff = errors.New("the sender broke off the payload")

// ChunkWriter writes a chunked payload to W; End ends it.
type ChunkWriter struct{ W io.Writer }

func (c ChunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), maxChunk)
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(n))
		if _, err := c.W.Write(hdr[:]); err != nil {
			return written, err
		}
		if _, err := c.W.Write(p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// End writes the end chunk: the payload is whole.
func (c ChunkWriter) End() error {
	_, err := c.W.Write(make([]byte, 4))
	return err
}

// ChunkReader reads a chunked payload from R: io.EOF after the end chunk,
// ErrBrokenOff when R ends before it, an error once more than Limit bytes
// came (Limit shared by every reader of one budget).
type ChunkReader struct {
	R     io.Reader
	Limit *Budget
	left  uint32
	done  bool
}

func (c *ChunkReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(c.R, hdr[:]); err != nil {
			return 0, brokenOff(err)
		}
		c.left = binary.BigEndian.Uint32(hdr[:])
		if c.left == 0 {
			c.done = true
			return 0, io.EOF
		}
		if c.left > maxChunk {
			return 0, fmt.Errorf("a chunk of %d bytes: at most %d", c.left, maxChunk)
		}
	}
	n, err := c.R.Read(p[:min(len(p), int(c.left))])
	c.left -= uint32(n)
	if lerr := c.Limit.Take(int64(n)); lerr != nil {
		return n, lerr
	}
	if err != nil {
		return n, brokenOff(err)
	}
	return n, nil
}

func brokenOff(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrBrokenOff
	}
	return err
}
