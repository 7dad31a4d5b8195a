package p9x

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
)

// bigPart is the size from which a frame's last part is written from
// where it lies (writev on a socket) rather than copied behind its header.
const bigPart = 32 << 10

// writer sends 9P frames whole. The p9 library writes a message as two or
// three parts under its own lock, each a write(2) on a wrapped connection;
// here the parts gather until the frame is complete and go out in one
// write, and an extension frame can never land between them.
type writer struct {
	mu   sync.Mutex
	w    io.Writer
	part []byte // the frame begun and not yet complete
}

// Write implements io.Writer for the p9 library.
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if len(w.part) < 4 {
			k := min(4-len(w.part), len(p))
			w.part, p = append(w.part, p[:k]...), p[k:]
			continue
		}
		size := int(binary.LittleEndian.Uint32(w.part))
		if size < headerLen {
			return 0, fmt.Errorf("9P frame of %d bytes", size)
		}
		need := size - len(w.part)
		if len(p) < need {
			w.part = append(w.part, p...)
			return n, nil
		}
		if err := w.flush(p[:need]); err != nil {
			return 0, err
		}
		p = p[need:]
	}
	return n, nil
}

// flush sends the pending part and last, the rest of its frame.
func (w *writer) flush(last []byte) error {
	var err error
	if len(last) >= bigPart {
		bufs := net.Buffers{w.part, last}
		_, err = bufs.WriteTo(w.w)
	} else {
		w.part = append(w.part, last...)
		_, err = w.w.Write(w.part)
	}
	if cap(w.part) > bigPart {
		w.part = nil // a one-off big frame: do not keep its buffer
	} else {
		w.part = w.part[:0]
	}
	return err
}

// frame sends one whole frame of the extension's.
func (w *writer) frame(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(b)
	return err
}
