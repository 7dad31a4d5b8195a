package dockerapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/errdefs"
)

// DefaultListen is where `cornus daemon docker` listens by default.
const DefaultListen = "unix:///run/cornus/docker.sock"

// Listen opens unix:///path or tcp://127.0.0.1:PORT. TCP must be loopback:
// the Engine API has no authentication, and whoever reaches it controls
// the host's containers. A stale unix socket (nothing answering) is
// replaced; a live one is an error.
func Listen(addr string) (net.Listener, error) {
	network, target, err := parseListen(addr)
	if err != nil {
		return nil, err
	}
	if network == "tcp" {
		l, err := net.Listen("tcp", target)
		if err != nil {
			return nil, err
		}
		// "localhost" is whatever the resolver says: check what was bound.
		if ta, ok := l.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
			l.Close()
			return nil, notLoopback(addr)
		}
		return l, nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", target, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("%s is already served by another process (stop it with `cornus daemon stop`): %w", target, errdefs.ErrConflict)
	}
	_ = os.Remove(target)
	l, err := net.Listen("unix", target)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(target, 0o660); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// CheckListen refuses an address Listen would refuse, without opening
// anything: a command checks its --listen before it connects to a backend
// or starts a background server.
func CheckListen(addr string) error {
	_, _, err := parseListen(addr)
	return err
}

// parseListen splits addr into "unix" and a path, or "tcp" and a loopback
// host:port.
func parseListen(addr string) (network, target string, err error) {
	u, err := url.Parse(addr)
	if err != nil {
		return "", "", fmt.Errorf("--listen %q: %v: %w", addr, err, errdefs.ErrInvalidArgument)
	}
	switch u.Scheme {
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Opaque
		}
		if path == "" {
			return "", "", fmt.Errorf("--listen %q: no socket path: use unix:///path/docker.sock: %w", addr, errdefs.ErrInvalidArgument)
		}
		return "unix", path, nil
	case "tcp":
		host, _, err := net.SplitHostPort(u.Host)
		if err != nil {
			return "", "", fmt.Errorf("--listen %q: %v: use tcp://127.0.0.1:PORT: %w", addr, err, errdefs.ErrInvalidArgument)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "", "", notLoopback(addr)
		}
		return "tcp", u.Host, nil
	}
	return "", "", fmt.Errorf("--listen %q: use unix:///path/docker.sock or tcp://127.0.0.1:PORT: %w", addr, errdefs.ErrInvalidArgument)
}

func notLoopback(addr string) error {
	return fmt.Errorf("--listen %q: the Docker API has no authentication, so cornus only serves it on loopback (tcp://127.0.0.1:PORT) or a unix socket: %w", addr, errdefs.ErrPermissionDenied)
}

// Ping checks that addr answers GET /_ping.
func Ping(ctx context.Context, addr string) error {
	u, err := url.Parse(addr)
	if err != nil {
		return err
	}
	tr := &http.Transport{}
	base := "http://" + u.Host
	if u.Scheme == "unix" {
		path := u.Path
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		base = "http://cornus"
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Server"), "cornus") {
		return fmt.Errorf("%s answered %s (server %q), not cornus", addr, resp.Status, resp.Header.Get("Server"))
	}
	return nil
}
