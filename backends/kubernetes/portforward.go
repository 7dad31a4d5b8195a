package kubernetes

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream" //nolint:staticcheck // client-go v0.37 (transport/spdy, tools/portforward) still uses these types and errors; k8s.io/streaming is only indirect
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/cornus-dev/cornus/backends"
)

// DialContainer connects to a TCP port of the running container through
// the pod's portforward subresource (the kubelet dials the port inside the
// pod's network namespace): `cornus port-forward` and tunnels use it, so a
// laptop reaches pods without a route to the cluster's network.
func (b *Backend) DialContainer(ctx context.Context, id string, port int, proto string) (net.Conn, error) {
	if proto != "" && proto != "tcp" {
		return nil, fmt.Errorf("port-forward to %s port %d/%s: Kubernetes forwards TCP only: %w", id, port, proto, errdefs.ErrNotImplemented)
	}
	c, err := b.find(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.pod == nil || stateOf(c.pod).state != backends.StateRunning {
		return nil, fmt.Errorf("port-forward to %s: the container is not running: %w", c.rec.Name, errdefs.ErrConflict)
	}
	rt, upgrader, err := spdy.RoundTripperFor(b.rest)
	if err != nil {
		return nil, fmt.Errorf("port-forward to %s: %w", c.rec.Name, err)
	}
	u := b.core.RESTClient().Post().Namespace(b.cfg.namespace).Resource("pods").Name(c.obj()).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, "POST", u)
	conn, _, err := dialer.Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return nil, fmt.Errorf("port-forward to %s: %w", c.rec.Name, translate(err))
	}
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, strconv.Itoa(port))
	h.Set(corev1.PortForwardRequestIDHeader, "0")
	errStream, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("port-forward to %s: %w", c.rec.Name, err)
	}
	_ = errStream.Close() // we send nothing on it
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("port-forward to %s: %w", c.rec.Name, err)
	}
	fc := &forwardConn{conn: conn, data: data, local: pfAddr("cornus"), remote: pfAddr(c.obj() + ":" + strconv.Itoa(port))}
	go func() {
		// The kubelet reports a failed dial (nothing listens) here.
		msg, _ := io.ReadAll(errStream)
		if len(msg) > 0 {
			fc.fail(fmt.Errorf("port-forward to %s port %d: %s: %w", c.rec.Name, port, msg, errdefs.ErrUnavailable))
		}
	}()
	return fc, nil
}

// forwardConn is one forwarded connection as a net.Conn.
type forwardConn struct {
	conn          httpstream.Connection
	data          httpstream.Stream
	local, remote net.Addr
	err           atomic.Pointer[error]
}

func (f *forwardConn) fail(err error) {
	f.err.Store(&err)
	_ = f.data.Reset() // best effort: the stored error is what Read reports
}

func (f *forwardConn) Read(p []byte) (int, error) {
	n, err := f.data.Read(p)
	if e := f.err.Load(); e != nil && err != nil {
		return n, *e
	}
	return n, err
}

func (f *forwardConn) Write(p []byte) (int, error) { return f.data.Write(p) }

// CloseWrite ends our direction; the other may still send.
func (f *forwardConn) CloseWrite() error { return f.data.Close() }

func (f *forwardConn) Close() error {
	_ = f.data.Reset() // best effort: closing the connection ends the stream too
	return f.conn.Close()
}

func (f *forwardConn) LocalAddr() net.Addr                { return f.local }
func (f *forwardConn) RemoteAddr() net.Addr               { return f.remote }
func (f *forwardConn) SetDeadline(t time.Time) error      { return nil }
func (f *forwardConn) SetReadDeadline(t time.Time) error  { return nil }
func (f *forwardConn) SetWriteDeadline(t time.Time) error { return nil }

type pfAddr string

func (a pfAddr) Network() string { return "portforward" }
func (a pfAddr) String() string  { return string(a) }
