package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	b, _ := json.Marshal(h)
	if _, err := st.Write(append(b, '\n')); err != nil {
		st.Close()
		return nil, err
	}
	br := bufio.NewReader(st)
	line, err := readLine(br)
	if err != nil {
		st.Close()
		return nil, err
	}
	var r DialReply
	if err := json.Unmarshal(line, &r); err != nil {
		st.Close()
		return nil, err
	}
	if r.Error != nil {
		st.Close()
		return nil, r.Error.Err()
	}
	_ = st.SetDeadline(time.Time{})
	return &BufferedConn{Conn: st, R: br}, nil
}

// ReadHeader reads the opening line of a stream the other side opened
// (bounded in size and time).
func ReadHeader(st net.Conn) (StreamHeader, error) {
	var h StreamHeader
	_ = st.SetReadDeadline(time.Now().Add(headerWait))
	defer func() { _ = st.SetReadDeadline(time.Time{}) }()
	// The opener sends nothing more before the answer: nothing past the
	// line is read here and lost.
	line, err := readLine(bufio.NewReaderSize(io.LimitReader(st, maxHeader), maxHeader))
	if err != nil {
		return h, fmt.Errorf("%w: stream header: %v", errdefs.ErrInvalidArgument, err)
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return h, fmt.Errorf("%w: stream header: %v", errdefs.ErrInvalidArgument, err)
	}
	return h, nil
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
