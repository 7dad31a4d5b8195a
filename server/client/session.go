package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/wsconn"
)

// Session is a deploy-attach session: while it lives, the deployments
// made under it live; its streams reach workloads.
type Session struct {
	ID  string
	mux *yamux.Session
	ws  *websocket.Conn
}

// OpenSession opens a session for project. A detached session ties no
// deployment (port-forward to a detached deployment).
func (c *Client) OpenSession(ctx context.Context, project string, detach bool) (*Session, error) {
	q := url.Values{}
	if detach {
		q.Set("detach", "1")
	}
	ws, resp, err := c.dialWS(ctx, projectPath(project, "session"), q.Encode())
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(-1)
	conf := yamux.DefaultConfig()
	conf.KeepAliveInterval, conf.ConnectionWriteTimeout = 2*time.Second, 10*time.Second
	conf.MaxStreamWindowSize = 16 << 20 // as the server: bulk streams (port-forward, mounts) need more than 256 KiB in flight
	conf.LogOutput = nil
	conf.Logger = discardLogger{}
	// The connection outlives the dial's context.
	mux, err := yamux.Client(wsconn.New(context.Background(), ws), conf)
	if err != nil {
		ws.CloseNow()
		return nil, err
	}
	return &Session{ID: resp.Header.Get(api.HeaderSession), mux: mux, ws: ws}, nil
}

type discardLogger struct{}

func (discardLogger) Print(...any)          {}
func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}

// Done is closed when the session ends (the server closed it or the
// connection broke).
func (s *Session) Done() <-chan struct{} { return s.mux.CloseChan() }

// Close ends the session: the server removes the deployments it owns.
func (s *Session) Close() error {
	err := s.mux.Close()
	s.ws.Close(websocket.StatusNormalClosure, "")
	return err
}

// Dial opens a stream to a workload's port through the server.
func (s *Session) Dial(ctx context.Context, d api.Dial) (net.Conn, error) {
	st, err := s.mux.OpenStream()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = st.SetDeadline(dl)
	}
	b, _ := json.Marshal(d)
	if _, err := st.Write(append(b, '\n')); err != nil {
		st.Close()
		return nil, err
	}
	br := bufio.NewReader(st)
	line, err := br.ReadSlice('\n')
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("dial %s:%d: %w", d.Service, d.Port, err)
	}
	var r api.DialReply
	if err := json.Unmarshal(line, &r); err != nil {
		st.Close()
		return nil, err
	}
	if r.Error != nil {
		st.Close()
		return nil, r.Error.Err()
	}
	_ = st.SetDeadline(time.Time{})
	return &bufferedConn{Conn: st, r: br}, nil
}

// bufferedConn reads what the reply's reader buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the stream (yamux closes its write side on
// Close only): the whole stream is closed.
func (c *bufferedConn) CloseWrite() error { return c.Conn.Close() }
