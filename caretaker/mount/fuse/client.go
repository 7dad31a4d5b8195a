package fuse

import (
	"io"

	"github.com/hugelgupf/p9/p9"
)

// newClient starts a 9P client on conn, whose writes never fail (see
// sturdyConn).
func newClient(conn io.ReadWriteCloser) (*p9.Client, error) {
	return p9.NewClient(sturdyConn{conn}, p9.WithMessageSize(msize))
}

// sturdyConn closes the connection when a write fails and reports the
// write as done; the read that follows then fails every pending request.
//
// Why: hugelgupf/p9 v0.3.0's client (sendRecv) puts a request's response
// holder back into a process-wide sync.Pool when its send fails, while
// the holder is still in the client's pending map. The receive error that
// later fails the pending requests is then delivered into the pooled
// holder, and whichever request takes it next — in any client of this
// process, e.g. the next mount's version exchange — fails at once with
// that stale error ("wait: socket error: EOF"). With no send error the
// holder leaves the pending map, through a receive, before it is pooled.
type sturdyConn struct{ io.ReadWriteCloser }

func (c sturdyConn) Write(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Write(p)
	if err != nil {
		_ = c.ReadWriteCloser.Close()
		return len(p), nil
	}
	return n, nil
}
