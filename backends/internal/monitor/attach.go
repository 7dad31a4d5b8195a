package monitor

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/containerd/errdefs"
)

// An attach request turns the control connection into a stream once the
// monitor has answered it with the record: the client's bytes go to the
// main process's stdin (when it asked for stdin and the container keeps
// stdin open), and the process's output comes back in Docker's
// multiplexed framing (8-byte header: stream id, 3 zero bytes, big-endian
// length). The stream ends with the current run. A resize request
// ({"op":"resize","width":W,"height":H}) sizes a TTY.
const (
	opAttach = "attach"
	opResize = "resize"
)

// frameMax bounds one frame the monitor sends.
const frameMax = 32 << 10

// resizer is what a Process on a terminal offers.
type resizer interface {
	Resize(width, height uint32) error
}

// stdinFor makes the stdin a run reads, when the container keeps stdin
// open: a pipe whose writer the monitor holds (so stdin never ends by
// itself) and attached clients write into. Each run gets its own.
func (m *monitor) stdinFor() (io.Reader, func(), error) {
	if !m.rec.Supervision.OpenStdin {
		return nil, func() {}, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("stdin pipe: %w", err)
	}
	m.mu.Lock()
	m.stdin = w
	m.mu.Unlock()
	return r, func() {
		m.mu.Lock()
		if m.stdin == w {
			m.stdin = nil
		}
		m.mu.Unlock()
		w.Close()
		r.Close()
	}, nil
}

// attach serves one attach connection; the record answer was sent.
func (m *monitor) attach(c net.Conn, req request) {
	_ = c.SetDeadline(time.Time{}) // fails only on a closed connection, which the writes below see
	out := m.hub.subscribe()
	defer m.hub.unsubscribe(out)
	if req.Stdin && m.rec.Supervision.OpenStdin {
		go func() {
			// dockerd's rule: the end of the client's input closes the
			// container's stdin when StdinOnce (and no TTY), and the
			// output keeps coming; otherwise it ends the attachment.
			if !m.copyStdin(c) {
				m.hub.unsubscribe(out)
			}
		}()
	}
	var hdr [8]byte
	for ch := range out {
		for p := ch.data; len(p) > 0; {
			n := min(len(p), frameMax)
			hdr[0] = ch.stream
			binary.BigEndian.PutUint32(hdr[4:], uint32(n))
			_ = c.SetWriteDeadline(time.Now().Add(requestTimeout)) // a failure shows in the Write
			if _, err := c.Write(hdr[:]); err != nil {
				return
			}
			if _, err := c.Write(p[:n]); err != nil {
				return
			}
			p = p[n:]
		}
	}
}

// copyStdin feeds the client's bytes to the current run's stdin until the
// client's input ends; it reports whether it closed the process's stdin
// then (StdinOnce without a TTY).
func (m *monitor) copyStdin(c net.Conn) (closed bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			m.mu.Lock()
			w := m.stdin
			m.mu.Unlock()
			if w != nil {
				_, _ = w.Write(buf[:n]) // the run may have ended: its input is dropped
			}
		}
		if err != nil {
			sup := m.rec.Supervision
			if !errors.Is(err, io.EOF) || !sup.StdinOnce || sup.TTY {
				return false
			}
			m.mu.Lock()
			if m.stdin != nil {
				m.stdin.Close()
			}
			m.mu.Unlock()
			return true
		}
	}
}

func (m *monitor) resize(w, h uint32) error {
	m.mu.Lock()
	p := m.proc
	m.mu.Unlock()
	r, ok := p.(resizer)
	if p == nil || !ok {
		return fmt.Errorf("%w: resize: the container is not running on a terminal", errdefs.ErrFailedPrecondition)
	}
	return r.Resize(w, h)
}

// AttachStreams are a client's ends of an attachment. The end of Stdin
// ends the attachment, as with docker attach, except with StdinOnce (no
// TTY): then it closes the container's stdin and output continues.
type AttachStreams struct {
	Stdin  io.Reader // nil: no input
	Stdout io.Writer
	Stderr io.Writer // nil: stderr goes to Stdout
	// Attached is called once the monitor has accepted the attachment.
	Attached func()
}

// Attach streams the container's output to s until its current run ends
// (or ctx ends), feeding s.Stdin to its stdin. A container that is not
// running is an errdefs Conflict.
func Attach(ctx context.Context, dir string, s AttachStreams) error {
	c, err := dial(ctx, dir)
	if err != nil {
		return notRunning(dir, err)
	}
	defer c.Close()
	defer context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })()
	if err := json.NewEncoder(c).Encode(request{Op: opAttach, Stdin: s.Stdin != nil}); err != nil {
		return ctxErr(ctx, err)
	}
	var resp response
	dec := json.NewDecoder(io.LimitReader(c, 16<<20))
	if err := dec.Decode(&resp); err != nil {
		return notRunning(dir, ctxErr(ctx, err))
	}
	if resp.Error != "" {
		return fromRemote(resp.Error, resp.Kind)
	}
	if s.Attached != nil {
		s.Attached()
	}
	if s.Stdin != nil {
		go func() {
			// Its end or failure ends our direction either way; a failed
			// CloseWrite means the connection is gone, which the reads see.
			_, _ = io.Copy(c, s.Stdin)
			_ = c.(*net.UnixConn).CloseWrite()
		}()
	}
	// The decoder may have read past the answer: the stream starts there,
	// after the newline that ends the answer.
	r := bufio.NewReader(io.MultiReader(dec.Buffered(), c))
	if nl, err := r.ReadByte(); err != nil || nl != '\n' {
		return fmt.Errorf("attach: malformed answer from the monitor: %w", ctxErr(ctx, cmp.Or(err, io.ErrUnexpectedEOF)))
	}
	stderr := s.Stderr
	if stderr == nil {
		stderr = s.Stdout
	}
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return ctxErr(ctx, err)
		}
		n := binary.BigEndian.Uint32(hdr[4:])
		if n > frameMax {
			return fmt.Errorf("attach: monitor sent a %d-byte frame", n)
		}
		w := s.Stdout
		if hdr[0] == 2 {
			w = stderr
		}
		if _, err := io.CopyN(w, r, int64(n)); err != nil {
			return ctxErr(ctx, err)
		}
	}
}

// Resize sizes the container's terminal.
func Resize(ctx context.Context, dir string, width, height uint32) error {
	_, answered, err := call(ctx, dir, request{Op: opResize, Width: width, Height: height})
	if !answered && err != nil {
		return notRunning(dir, err)
	}
	return err
}

func notRunning(dir string, err error) error {
	return fmt.Errorf("%w: the container is not running (no monitor in %s): %v", errdefs.ErrConflict, dir, err)
}
