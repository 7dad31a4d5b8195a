package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/errdefs"
)

// maxHeader bounds a stream's opening line and its answer.
const maxHeader = 4 << 10

// headerWait bounds the wait for a stream's opening line.
const headerWait = 10 * time.Second

// OpenStream sends h on a new stream st and waits (at most wait) for the
// other side's answer: st, ready for bytes, or the refusal (st closed).
func OpenStream(st net.Conn, h StreamHeader, wait time.Duration) (net.Conn, error) {
	_ = st.SetDeadline(time.Now().Add(wait))
	if _, err := st.Write(HeaderLine(h)); err != nil {
		st.Close()
		return nil, err
	}
	br := headerReader(st)
	if err := readAnswer(br); err != nil {
		st.Close()
		return nil, err
	}
	_ = st.SetDeadline(time.Time{})
	return behind(st, br), nil
}

// HeaderLine is h as a stream's opening line.
func HeaderLine(h StreamHeader) []byte {
	b, _ := json.Marshal(h)
	return append(b, '\n')
}

// readAnswer reads the answer to a stream's header: nil, or the refusal.
func readAnswer(br *bufio.Reader) error {
	line, err := readLine(br)
	if err != nil {
		return err
	}
	var r DialReply
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	if r.Error != nil {
		return r.Error.Err()
	}
	return nil
}

// OpenEarly opens a stream carrying h on st and returns it at once, its
// answer unread: h goes out with the first write (one frame, no round
// trip waited for), or before the first read. The first Read (or Answer)
// reads the answer, waiting at most wait; a refusal is then its error,
// and what was written is lost. Only a peer that keeps what follows a
// header (HeaderEarlyData) may be sent bytes early.
func OpenEarly(st net.Conn, h StreamHeader, wait time.Duration) (net.Conn, error) {
	return &earlyConn{Conn: st, wait: wait, header: HeaderLine(h)}, nil
}

// earlyConn is a stream opened early: its header is sent with the first
// write, its answer read once, first.
type earlyConn struct {
	net.Conn
	wait time.Duration

	hmu    sync.Mutex // held while the header goes out
	header []byte
	sent   atomic.Bool

	dmu      sync.Mutex
	deadline time.Time // the caller's read deadline

	once   sync.Once
	answer error
	rest   net.Conn // the stream behind the answer
}

func (c *earlyConn) Write(p []byte) (int, error) {
	if !c.sent.Load() {
		c.hmu.Lock()
		defer c.hmu.Unlock()
		if !c.sent.Load() {
			n, err := c.Conn.Write(append(c.header, p...))
			c.sent.Store(true)
			return max(n-len(c.header), 0), err
		}
	}
	return c.Conn.Write(p)
}

// sendHeader sends the header if no write has yet.
func (c *earlyConn) sendHeader() error {
	if c.sent.Load() {
		return nil
	}
	_, err := c.Write(nil)
	return err
}

func (c *earlyConn) awaitAnswer() error {
	c.once.Do(func() {
		if err := c.sendHeader(); err != nil {
			c.answer = err
			return
		}
		c.dmu.Lock()
		mine := c.deadline
		c.dmu.Unlock()
		wait := time.Now().Add(c.wait)
		if !mine.IsZero() && mine.Before(wait) {
			wait = mine
		}
		_ = c.Conn.SetReadDeadline(wait)
		br := headerReader(c.Conn)
		c.answer = readAnswer(br)
		c.dmu.Lock()
		_ = c.Conn.SetReadDeadline(c.deadline)
		c.dmu.Unlock()
		c.rest = behind(c.Conn, br)
	})
	return c.answer
}

func (c *earlyConn) Read(p []byte) (int, error) {
	if err := c.awaitAnswer(); err != nil {
		return 0, err
	}
	return c.rest.Read(p)
}

// SetReadDeadline and SetDeadline keep the caller's read deadline: the
// wait for the answer is bounded by it too, and it holds after.
func (c *earlyConn) SetReadDeadline(t time.Time) error {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.deadline = t
	return c.Conn.SetReadDeadline(t)
}

func (c *earlyConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *earlyConn) CloseWrite() error {
	_ = c.sendHeader() // a stream that sent nothing still opens (its write side then closed)
	return closeWrite(c.Conn)
}

// Answer waits for the answer to a stream opened early (OpenEarly) and
// returns its refusal; nil for any other stream (answered when opened).
func Answer(c net.Conn) error {
	if ec, ok := c.(*earlyConn); ok {
		return ec.awaitAnswer()
	}
	return nil
}

// ReadHeader reads the opening line of a stream the other side opened
// (bounded in size and time). The stream it returns reads what came
// behind the line first: an opener may send bytes before the answer
// (OpenEarly).
func ReadHeader(st net.Conn) (StreamHeader, net.Conn, error) {
	var h StreamHeader
	_ = st.SetReadDeadline(time.Now().Add(headerWait))
	defer func() { _ = st.SetReadDeadline(time.Time{}) }()
	br := headerReader(st)
	line, err := readLine(br)
	if err != nil {
		return h, st, fmt.Errorf("%w: stream header: %v", errdefs.ErrInvalidArgument, err)
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return h, st, fmt.Errorf("%w: stream header: %v", errdefs.ErrInvalidArgument, err)
	}
	return h, behind(st, br), nil
}

// Reply answers a stream's header: nil to go ahead, else the refusal.
func Reply(st net.Conn, err error) {
	var r DialReply
	if err != nil {
		e, _ := ErrorOf(err)
		r.Error = &e
	}
	b, _ := json.Marshal(r)
	_, _ = st.Write(append(b, '\n'))
}

func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull || len(line) > maxHeader {
		return nil, fmt.Errorf("stream header longer than %d bytes", maxHeader)
	}
	return line, err
}

// BufferedConn reads what a header's reader buffered first.
type BufferedConn struct {
	net.Conn
	R *bufio.Reader
}

func (c *BufferedConn) Read(p []byte) (int, error) { return c.R.Read(p) }

// CloseWrite half-closes the stream (yamux closes its write side on
// Close only): the whole stream is closed.
func (c *BufferedConn) CloseWrite() error { return c.Conn.Close() }

// behind is st reading what br buffered of it first.
func behind(st net.Conn, br *bufio.Reader) net.Conn {
	defer releaseHeaderReader(br)
	if br.Buffered() == 0 {
		return st
	}
	rest, _ := br.Peek(br.Buffered())
	return &prefixConn{Conn: st, rest: bytes.Clone(rest)}
}

// headerReaders holds the readers of streams' header lines: each stream
// opened reads one or two (measured: 12 KiB of a relayed connection's
// 30 KiB allocated, zeroed, collected).
var headerReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, maxHeader) }}

func headerReader(r io.Reader) *bufio.Reader {
	br := headerReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// releaseHeaderReader returns br, whose buffered bytes its caller copied.
func releaseHeaderReader(br *bufio.Reader) {
	br.Reset(nil)
	headerReaders.Put(br)
}

// prefixConn reads rest, then its stream.
type prefixConn struct {
	net.Conn
	rest []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.rest) == 0 {
		return c.Conn.Read(p)
	}
	n := copy(p, c.rest)
	c.rest = c.rest[n:]
	return n, nil
}

// TakeEarly returns the bytes st's opener sent behind its header that
// ReadHeader buffered, and drops them from st: a relay sends them on
// with its own header, in one frame.
func TakeEarly(st net.Conn) []byte {
	pc, ok := st.(*prefixConn)
	if !ok {
		return nil
	}
	rest := pc.rest
	pc.rest = nil
	return rest
}

func (c *prefixConn) CloseWrite() error { return closeWrite(c.Conn) }

// closeWrite half-closes c where it can, else closes it (a yamux stream
// half-closes on Close).
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
