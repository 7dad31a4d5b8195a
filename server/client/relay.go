package client

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/muxconn"
)

// OpenRelay opens the relay connection of project's caretaker companion
// (c's token is the deployment's caretaker token, valid nowhere else):
// Open on it relays a workload's egress through the server.
func (c *Client) OpenRelay(ctx context.Context, project string) (*Session, error) {
	return c.OpenRelayAs(ctx, project, RelayOptions{})
}

// RelayOptions say which replica a relay connection serves and how it
// answers the streams the server opens on it.
type RelayOptions struct {
	// Service and Replica name the companion's replica: the server opens
	// its port-forward and agent streams on this connection.
	Service string
	Replica int
	// Handlers serve the server's streams, by operation (in place before
	// the first can arrive).
	Handlers map[string]Handler
}

// OpenRelayAs opens a relay connection for one replica's companion.
func (c *Client) OpenRelayAs(ctx context.Context, project string, o RelayOptions) (*Session, error) {
	q := url.Values{}
	if o.Service != "" {
		q.Set("service", o.Service)
		q.Set("replica", strconv.Itoa(o.Replica))
	}
	conn, resp, err := c.dialMux(ctx, api.Version+"/relay/"+url.PathEscape(project), q)
	if err != nil {
		return nil, err
	}
	mux, err := muxOver(conn)
	if err != nil {
		return nil, err
	}
	s := &Session{mux: mux, conn: conn, early: api.TakesEarly(resp.Header), handlers: maps.Clone(o.Handlers)}
	if s.handlers == nil {
		s.handlers = map[string]Handler{}
	}
	go s.accept()
	return s, nil
}

// muxOver runs the client side of yamux over an upgraded connection.
func muxOver(conn *muxconn.Conn) (*yamux.Session, error) {
	conf := yamux.DefaultConfig()
	conf.KeepAliveInterval, conf.ConnectionWriteTimeout = 2*time.Second, 10*time.Second
	conf.MaxStreamWindowSize = 4 << 20 // as the server (its streamWindow says why)
	conf.LogOutput = nil
	conf.Logger = discardLogger{}
	mux, err := yamux.Client(conn, conf)
	if err != nil {
		_ = conn.Close() // best effort: the yamux error is the one reported
		return nil, err
	}
	return mux, nil
}

// SetDialContext makes c open its connections with dial (a caretaker in
// transparent mode marks its own sockets so its redirect skips them).
func (c *Client) SetDialContext(dial func(ctx context.Context, network, addr string) (net.Conn, error)) {
	var t *http.Transport
	if cur, ok := c.http.Transport.(*http.Transport); ok && cur != nil {
		t = cur.Clone()
	} else {
		t = http.DefaultTransport.(*http.Transport).Clone()
	}
	t.DialContext = dial
	c.http = &http.Client{Transport: t}
}

// SetTransport makes c use t (a caretaker trusting the server's CA from
// its config rather than a file).
func (c *Client) SetTransport(t *http.Transport) { c.http = &http.Client{Transport: t} }

// Closed reports whether the session's connection is gone.
func (s *Session) Closed() bool { return s.mux.IsClosed() }
