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
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", addr, err)
	}
	switch u.Scheme {
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Opaque
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s is already served by another process (stop it with `cornus daemon stop`): %w", path, errdefs.ErrConflict)
		}
		_ = os.Remove(path)
		l, err := net.Listen("unix", path)
		if err != nil {
			return nil, err
		}
		if err := os.Chmod(path, 0o660); err != nil {
			l.Close()
			return nil, err
		}
		return l, nil
	case "tcp":
		host, _, err := net.SplitHostPort(u.Host)
		if err != nil {
			return nil, fmt.Errorf("--listen %q: %w", addr, err)
		}
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("--listen %q: the Docker API has no authentication, so cornus only serves it on loopback (tcp://127.0.0.1:PORT) or a unix socket: %w", addr, errdefs.ErrPermissionDenied)
		}
		return net.Listen("tcp", u.Host)
	}
	return nil, fmt.Errorf("--listen %q: use unix:///path/docker.sock or tcp://127.0.0.1:PORT: %w", addr, errdefs.ErrInvalidArgument)
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
