package streamcopy

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// largest records the largest write it is given.
type largest struct{ n, all int }

func (l *largest) Write(p []byte) (int, error) {
	l.n, l.all = max(l.n, len(p)), l.all+len(p)
	return len(p), nil
}

// sender listens on loopback and writes size bytes to each connection.
func sender(t *testing.T, size int) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = c.Write(bytes.Repeat([]byte{'x'}, size))
			}()
		}
	}()
	return l.Addr().String()
}

// Locks down the chunking: from a TCP connection to a stream that is no
// socket, io.Copy moves 32 KiB at a time (the connection's WriteTo); Copy
// moves what one read brings, up to Chunk.
func TestCopyInLargeChunks(t *testing.T) {
	const size = 4 << 20
	addr := sender(t, size)
	for _, tc := range []struct {
		name string
		copy func(io.Writer, io.Reader) (int64, error)
		big  bool
	}{{"io.Copy", io.Copy, false}, {"Copy", Copy, true}} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		w := &largest{}
		_, err = tc.copy(w, c)
		c.Close()
		if err != nil || w.all != size {
			t.Fatalf("%s copied %d bytes (%v), want %d", tc.name, w.all, err, size)
		}
		if big := w.n > 32<<10; big != tc.big {
			t.Errorf("%s: largest write %d bytes", tc.name, w.n)
		}
	}
}
