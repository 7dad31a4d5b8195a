// Package streamcopy carries bytes between a socket and a session stream
// (port-forward, tunnels, egress relays) in large chunks, both ways.
package streamcopy

import (
	"io"
	"net"
	"sync"
)

// Chunk is what one copy moves at a time: each write to a session stream
// is a frame of the session, and large ones make few.
const Chunk = 256 << 10

// Copy copies src to dst Chunk at a time. io.Copy and io.CopyBuffer hand
// the copy to a TCP connection's own ReadFrom or WriteTo, which fall back
// to 32 KiB reads and writes when the other side is no socket: a session
// frame and a syscall every 32 KiB.
func Copy(dst io.Writer, src io.Reader) (int64, error) {
	buf := chunks.Get().(*[]byte)
	defer chunks.Put(buf)
	return io.CopyBuffer(writerOnly{dst}, readerOnly{src}, *buf)
}

// chunks keeps Copy's buffers: a connection relayed for one request
// would otherwise allocate (and zero) two of them per hop, the largest
// share of a short connection's CPU (measured: a fifth of a relayed
// connection's setup).
var chunks = sync.Pool{New: func() any { b := make([]byte, Chunk); return &b }}

type writerOnly struct{ io.Writer }

type readerOnly struct{ io.Reader }

// Pipe copies both ways until both directions are done, half-closing each
// side's write end as its direction ends (closing it where it cannot
// half-close).
func Pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = Copy(dst, src)
		CloseWrite(dst)
	}
	wg.Add(2)
	go cp(a, b)
	go cp(b, a)
	wg.Wait()
}

// CloseWrite half-closes c, or closes it where it cannot.
func CloseWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
