package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/containerd/errdefs"

	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/server/api"
)

// Session is a deploy-attach session: while it lives, the deployments
// made under it live; its streams reach workloads, and the server's
// streams (egress leaving from here, client-local mounts) reach handlers.
type Session struct {
	ID   string
	mux  *yamux.Session
	conn io.Closer
	// early: the server keeps bytes sent behind a stream's header
	// (api.HeaderEarlyData).
	early bool

	mu       sync.Mutex
	handlers map[string]Handler
}

// Handler serves one stream the server opened; it must answer with
// Reply before carrying bytes, and close the stream when done.
type Handler func(h api.StreamHeader, st net.Conn)

// OpenSession opens a session for project. A detached session ties no
// deployment (port-forward to a detached deployment).
func (c *Client) OpenSession(ctx context.Context, project string, detach bool) (*Session, error) {
	q := url.Values{}
	if detach {
		q.Set("detach", "1")
	}
	return c.openSession(ctx, project, q)
}

// ResumeSession takes session id of project up again after the server
// restarted (its deployment waits for it for the server's grace):
// errdefs.ErrNotFound when there is none to resume, ErrUnavailable while
// the server cannot be reached.
func (c *Client) ResumeSession(ctx context.Context, project, id string) (*Session, error) {
	return c.openSession(ctx, project, url.Values{"resume": {id}})
}

func (c *Client) openSession(ctx context.Context, project string, q url.Values) (*Session, error) {
	conn, resp, err := c.dialMux(ctx, projectPath(project, "session"), q)
	if err != nil {
		return nil, err
	}
	mux, err := muxOver(conn)
	if err != nil {
		return nil, err
	}
	s := &Session{ID: resp.Header.Get(api.HeaderSession), mux: mux, conn: conn, early: api.TakesEarly(resp.Header), handlers: map[string]Handler{}}
	go s.accept()
	return s, nil
}

// Handle serves the server's streams of operation op with h.
func (s *Session) Handle(op string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[op] = h
}

// accept dispatches the streams the server opens.
func (s *Session) accept() {
	for {
		st, err := s.mux.AcceptStream()
		if err != nil {
			return
		}
		go s.dispatch(st)
	}
}

func (s *Session) dispatch(st net.Conn) {
	h, st, err := api.ReadHeader(st)
	if err != nil {
		Reply(st, err)
		st.Close()
		return
	}
	s.mu.Lock()
	fn := s.handlers[h.Op]
	s.mu.Unlock()
	if fn == nil {
		Reply(st, fmt.Errorf("%w: this client does not serve %q streams", errdefs.ErrNotImplemented, h.Op))
		st.Close()
		return
	}
	fn(h, st)
}

// Reply answers a stream's header: nil to go ahead, else the refusal.
func Reply(st net.Conn, err error) { api.Reply(st, err) }

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
	_ = s.conn.Close() // yamux closed it already; the mux's error is the one
	return err
}

// Dial opens a stream to a workload's port through the server.
func (s *Session) Dial(ctx context.Context, d api.Dial) (net.Conn, error) {
	c, err := s.Open(ctx, api.StreamHeader{Op: api.OpDial, Dial: &d})
	if err != nil {
		return nil, fmt.Errorf("dial %s:%d: %w", d.Service, d.Port, err)
	}
	return c, nil
}

// DialEarly is Dial for a TCP connection already accepted on this side
// (port-forward): the stream returns before the server's answer, the
// first bytes go with its header, and a refusal is the first read's
// error (api.OpenEarly).
func (s *Session) DialEarly(ctx context.Context, d api.Dial) (net.Conn, error) {
	c, err := s.OpenEarly(ctx, api.StreamHeader{Op: api.OpDial, Dial: &d})
	if err != nil {
		return nil, fmt.Errorf("dial %s:%d: %w", d.Service, d.Port, err)
	}
	return c, nil
}

// Open opens a stream carrying h and waits for the other side's answer:
// the stream, ready for bytes, or the refusal.
func (s *Session) Open(ctx context.Context, h api.StreamHeader) (net.Conn, error) {
	st, wait, err := s.openStream(ctx)
	if err != nil {
		return nil, err
	}
	return api.OpenStream(st, h, wait)
}

// OpenEarly opens a stream carrying h and returns it before the answer
// (api.OpenEarly) when the server takes early bytes, else as Open does:
// for a caller that has nothing to tell its own peer on a refusal but
// to close (a redirected connection, already accepted).
func (s *Session) OpenEarly(ctx context.Context, h api.StreamHeader) (net.Conn, error) {
	if !s.early {
		return s.Open(ctx, h)
	}
	st, wait, err := s.openStream(ctx)
	if err != nil {
		return nil, err
	}
	return api.OpenEarly(st, h, wait)
}

// openStream opens a stream, with how long its answer may take.
func (s *Session) openStream(ctx context.Context) (net.Conn, time.Duration, error) {
	st, err := s.mux.OpenStream()
	if err != nil {
		return nil, 0, fmt.Errorf("session: %w", err)
	}
	wait := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	return st, wait, nil
}
