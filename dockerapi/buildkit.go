package dockerapi

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/containerd/errdefs"
)

// BuildKit's API for docker buildx (its docker driver): /grpc carries
// BuildKit's control service, /session a build session, each on a
// connection upgraded to h2c. Both go to the backend's builder
// (builder.Builder), which checks each solve's entitlements against the
// host policy and makes its result land in the backend's store.

// buildkitGRPC serves POST /grpc.
func (s *Server) buildkitGRPC(w http.ResponseWriter, r *http.Request) {
	if s.build == nil {
		writeError(w, fmt.Errorf("POST /grpc: this server builds no images (it was started without a builder): %w", errdefs.ErrNotImplemented))
		return
	}
	if err := s.build.ServesBuildKit(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	h, err := takeOver(w)
	if err != nil {
		writeError(w, err)
		return
	}
	fmt.Fprintf(h.conn, "HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
	_ = s.build.ServeBuildKit(r.Context(), bufferedConn{Conn: h.conn, r: h.in}, s.policy)
}

// buildkitSession serves POST /session: a build session spliced to the
// backend's builder.
func (s *Server) buildkitSession(w http.ResponseWriter, r *http.Request) {
	if s.build == nil {
		writeError(w, fmt.Errorf("POST /session: this server builds no images (it was started without a builder): %w", errdefs.ErrNotImplemented))
		return
	}
	meta := map[string][]string{}
	for k, v := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-docker-expose-session-") {
			meta[k] = v
		}
	}
	up, err := s.build.DialSession(r.Context(), r.Header.Get("Upgrade"), meta)
	if err != nil {
		writeError(w, err)
		return
	}
	defer up.Close()
	h, err := takeOver(w)
	if err != nil {
		return
	}
	defer h.conn.Close()
	fmt.Fprintf(h.conn, "HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", r.Header.Get("Upgrade"))
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, h.in)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(h.conn, up)
	_ = h.conn.Close()
	<-done
}

// bufferedConn reads what net/http buffered before the hijack first.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
