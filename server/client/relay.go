package client

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/wsconn"
)

// OpenRelay opens the relay connection of project's caretaker companion
// (c's token is the deployment's caretaker token, valid nowhere else):
// Open on it relays a workload's egress through the server.
func (c *Client) OpenRelay(ctx context.Context, project string) (*Session, error) {
	ws, _, err := c.dialWS(ctx, api.Version+"/relay/"+url.PathEscape(project), "")
	if err != nil {
		return nil, err
	}
	mux, err := muxOver(ws)
	if err != nil {
		return nil, err
	}
	return &Session{mux: mux, ws: ws, handlers: map[string]Handler{}}, nil
}

// muxOver runs the client side of yamux over a WebSocket. The connection
// outlives the dial's context.
func muxOver(ws *websocket.Conn) (*yamux.Session, error) {
	ws.SetReadLimit(-1) // yamux frames carry their own bounds
	conf := yamux.DefaultConfig()
	conf.KeepAliveInterval, conf.ConnectionWriteTimeout = 2*time.Second, 10*time.Second
	conf.MaxStreamWindowSize = 16 << 20 // as the server: bulk streams (port-forward, mounts) need more than 256 KiB in flight
	conf.LogOutput = nil
	conf.Logger = discardLogger{}
	mux, err := yamux.Client(wsconn.New(context.Background(), ws), conf)
	if err != nil {
		ws.CloseNow()
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
