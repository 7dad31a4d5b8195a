package p9x

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// ErrUnsupported is ListDir's answer once the peer has refused Tlistdir:
// not a cornus export.
var ErrUnsupported = errors.New("9P extension Tlistdir: not spoken by the export")

// Client wraps the mounting end's connection: the p9 client reads and
// writes through it, and ListDir asks the export for a listing with
// attributes. One goroutine reads every frame: the extension's replies
// go to their callers, the p9 client's frames are handed over whole to
// its reads, which take them straight from the buffer.
type Client struct {
	conn  io.ReadWriteCloser
	br    *bufio.Reader
	w     writer
	tags  chan uint16
	unsup atomic.Bool

	mu      sync.Mutex
	waiting map[uint16]chan []byte

	next     chan int      // the size of the next p9 frame, now readable
	consumed chan struct{} // the p9 client has read that frame
	left     int           // of the frame being read; the p9 client reads one at a time

	dead      chan struct{} // the reads have failed: err says why
	err       error
	closing   chan struct{} // Close was called
	closeOnce sync.Once
}

// NewClient starts reading conn.
func NewClient(conn io.ReadWriteCloser) *Client {
	c := &Client{
		conn: conn, br: bufio.NewReaderSize(conn, 64<<10), w: writer{w: conn},
		tags: make(chan uint16, extTagLast-extTagFirst+1), waiting: map[uint16]chan []byte{},
		next: make(chan int), consumed: make(chan struct{}), dead: make(chan struct{}), closing: make(chan struct{}),
	}
	for t := extTagFirst; t <= extTagLast; t++ {
		c.tags <- uint16(t)
	}
	go c.readLoop()
	return c
}

func (c *Client) readLoop() {
	err := c.demux()
	c.mu.Lock()
	c.err = err
	close(c.dead)
	c.mu.Unlock()
}

func (c *Client) demux() error {
	for {
		h, err := peekHeader(c.br)
		if err != nil {
			return err
		}
		if !isExtTag(h.tag) {
			select {
			case c.next <- int(h.size):
			case <-c.closing:
				return io.ErrClosedPipe
			}
			<-c.consumed
			continue
		}
		if h.size < headerLen || h.size > maxReply {
			return fmt.Errorf("9P extension: reply of %d bytes", h.size)
		}
		f := make([]byte, h.size)
		if _, err := io.ReadFull(c.br, f); err != nil {
			return err
		}
		c.mu.Lock()
		ch := c.waiting[h.tag]
		delete(c.waiting, h.tag)
		c.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
}

// maxReply bounds an Rlistdir: MaxEntries entries of a name of at most
// 255 bytes and 148 more.
const maxReply = headerLen + 15 + MaxEntries*(2+255+160)

// Read implements io.Reader for the p9 client.
func (c *Client) Read(p []byte) (int, error) {
	if c.left == 0 {
		select {
		case c.left = <-c.next:
		case <-c.dead:
			return 0, c.err
		}
	}
	n, err := c.br.Read(p[:min(len(p), c.left)])
	c.left -= n
	if c.left == 0 || err != nil {
		c.left = 0
		c.consumed <- struct{}{}
	}
	return n, err
}

// Write implements io.Writer for the p9 client.
func (c *Client) Write(p []byte) (int, error) { return c.w.Write(p) }

// Close closes the connection; pending calls fail.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closing)
		err = c.conn.Close()
	})
	return err
}

// ListDir asks for at most max entries of dir (a path from the export's
// root, "" for the root) from offset, with their attributes, the QID path
// of the directory the export found there, and whether the listing ends.
func (c *Client) ListDir(dir string, offset uint64, max int) (dirPath uint64, ents []Dirent, eof bool, err error) {
	if c.unsup.Load() {
		return 0, nil, false, ErrUnsupported
	}
	if max > MaxEntries {
		return 0, nil, false, fmt.Errorf("9P extension: %d entries asked, at most %d", max, MaxEntries)
	}
	f, err := c.call(func(tag uint16) []byte { return encodeTlistdir(tag, dir, offset, max) })
	if err != nil {
		return 0, nil, false, err
	}
	switch parseHeader(f).typ {
	case msgRlistdir:
	case msgRlerror:
		c.unsup.Store(true)
		return 0, nil, false, ErrUnsupported
	default:
		return 0, nil, false, fmt.Errorf("9P extension: reply of type %d to Tlistdir", parseHeader(f).typ)
	}
	dirErr, dirPath, eof, ents, err := decodeRlistdir(f[headerLen:])
	if err != nil {
		return 0, nil, false, err
	}
	if dirErr != 0 {
		return 0, nil, false, dirErr
	}
	if len(ents) > max {
		return 0, nil, false, fmt.Errorf("9P extension: %d entries for %d asked", len(ents), max)
	}
	return dirPath, ents, eof, nil
}

// call sends the request req encodes under a tag of the extension's and
// returns the reply frame.
func (c *Client) call(req func(tag uint16) []byte) ([]byte, error) {
	var tag uint16
	select {
	case tag = <-c.tags:
	case <-c.dead:
		return nil, c.err
	}
	defer func() { c.tags <- tag }()
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.waiting[tag] = ch
	c.mu.Unlock()
	if err := c.w.frame(req(tag)); err != nil {
		c.forget(tag)
		return nil, err
	}
	select {
	case f := <-ch:
		return f, nil
	case <-c.dead:
		c.forget(tag)
		return nil, c.err
	}
}

func (c *Client) forget(tag uint16) {
	c.mu.Lock()
	delete(c.waiting, tag)
	c.mu.Unlock()
}

// Speaks reports whether ListDir may be asked: true until the export has
// refused it.
func (c *Client) Speaks() bool { return !c.unsup.Load() }
