package outbound

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
)

// Opener opens a relayed stream: the caretaker's connection to the
// server. Open waits for the server's answer; OpenEarly may return the
// stream before it (its refusal then the first Read's error, api.Answer).
type Opener interface {
	Open(ctx context.Context, h api.StreamHeader) (net.Conn, error)
	OpenEarly(ctx context.Context, h api.StreamHeader) (net.Conn, error)
}

// Router decides and connects one service replica's outbound connections.
type Router struct {
	Service string
	Replica int
	// Policy is the service's egress policy; nil sends everything to the
	// cluster route.
	Policy *egress.Policy
	// Relay carries the client and gateway routes; nil refuses them.
	Relay Opener
	// Dial connects the cluster route (default: a net.Dialer). In
	// transparent mode it marks its sockets so the redirect skips them.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// dialTimeout bounds one connection's setup, relayed or direct.
const dialTimeout = 15 * time.Second

// Decide is the route for d.
func (r *Router) Decide(d egress.Destination) egress.Decision {
	if r.Policy == nil {
		return egress.Decision{Route: egress.Cluster, By: "no policy"}
	}
	return r.Policy.Decide(d)
}

// Connect decides d's route and connects it; a refusal names the route
// and what decided it.
func (r *Router) Connect(ctx context.Context, d egress.Destination) (net.Conn, egress.Decision, error) {
	return r.connect(ctx, d, false)
}

// ConnectEarly is Connect for a caller with nothing to answer its own
// peer but a close (a redirected connection): a relayed route returns
// before the server's answer, so the first bytes go with the stream's
// header; api.Answer then has the refusal.
func (r *Router) ConnectEarly(ctx context.Context, d egress.Destination) (net.Conn, egress.Decision, error) {
	return r.connect(ctx, d, true)
}

func (r *Router) connect(ctx context.Context, d egress.Destination, early bool) (net.Conn, egress.Decision, error) {
	if d.Port == 0 {
		return nil, egress.Decision{}, fmt.Errorf("%w: egress to %s: no port", errdefs.ErrInvalidArgument, d)
	}
	dec := r.Decide(d)
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	switch dec.Route {
	case egress.Cluster:
		dial := r.Dial
		if dial == nil {
			var dl net.Dialer
			dial = dl.DialContext
		}
		c, err := dial(ctx, "tcp", d.String())
		if err != nil {
			return nil, dec, fmt.Errorf("%w: egress to %s (route cluster, %s): %v", errdefs.ErrUnavailable, d, dec.By, err)
		}
		return c, dec, nil
	case egress.Client, egress.Gateway:
		if r.Relay == nil {
			return nil, dec, fmt.Errorf("%w: egress to %s: route %s (%s) needs the server relay, and this caretaker has none", errdefs.ErrFailedPrecondition, d, dec.Route, dec.By)
		}
		open := r.Relay.Open
		if early {
			open = r.Relay.OpenEarly
		}
		c, err := open(ctx, api.StreamHeader{Op: api.OpEgress, Egress: &api.EgressOpen{
			Service: r.Service, Replica: r.Replica, Dest: d.String(), Route: dec.Route}})
		if err != nil {
			return nil, dec, fmt.Errorf("egress to %s (route %s, %s): %w", d, dec.Route, dec.By, err)
		}
		return c, dec, nil
	}
	return nil, dec, fmt.Errorf("%w: egress to %s: denied (%s)", errdefs.ErrPermissionDenied, d, dec.By)
}
