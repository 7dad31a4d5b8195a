package dockerapi

import (
	"encoding/binary"
	"io"
	"sync"
)

// Stream ids of Docker's multiplexed stream format.
const (
	streamStdin  = 0
	streamStdout = 1
	streamStderr = 2
)

// frameWriter writes Docker's multiplexed stream: each write becomes one
// frame, an 8-byte header (stream id, 3 zero bytes, big-endian length)
// then the payload. Writers sharing one connection share a mutex so frames
// never interleave.
type frameWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	stream byte
}

func (f frameWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var hdr [8]byte
	hdr[0] = f.stream
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(p)))
	if _, err := f.w.Write(hdr[:]); err != nil {
		return 0, err
	}
	return f.w.Write(p)
}
