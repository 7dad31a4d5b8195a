package dockerapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/buildinfo"
)

// API versions served. Clients negotiate down to MaxAPIVersion; docker
// compose v5 needs at least 1.40.
const (
	MaxAPIVersion = "1.47"
	MinAPIVersion = "1.24"
)

// Server answers Engine API requests with a backend.
type Server struct {
	b      backends.Backend
	policy hostpolicy.Policy
	mux    *http.ServeMux
	start  time.Time

	execs    *execRegistry
	sessions *ttySessions
	cache    *stateCache
	attached *attachments

	log io.Writer
	// build serves POST /build; nil: builds answer 501.
	build *builder.Builder

	// autoRemove holds containers created with HostConfig.AutoRemove.
	mu         sync.Mutex
	autoRemove map[string]bool
}

type config struct {
	policy *hostpolicy.Policy
	log    io.Writer
	cache  cacheConfig
	build  *builder.Builder
}

// Option configures New.
type Option func(*config)

// WithPolicy sets what containers may take from the host (default:
// nothing — privileged and bind mounts are refused).
func WithPolicy(p hostpolicy.Policy) Option { return func(c *config) { c.policy = &p } }

// WithRequestLog writes one line per request (method, path, status,
// duration) to w.
func WithRequestLog(w io.Writer) Option { return func(c *config) { c.log = w } }

// WithBuilder serves POST /build with bx (built for the same backend);
// its owner closes it.
func WithBuilder(bx *builder.Builder) Option { return func(c *config) { c.build = bx } }

// New returns a Server for b.
func New(b backends.Backend, opts ...Option) *Server {
	var c config
	for _, o := range opts {
		o(&c)
	}
	s := &Server{
		b: b, mux: http.NewServeMux(), start: time.Now(),
		execs: newExecRegistry(), sessions: newTTYSessions(), cache: newStateCache(b, c.cache), attached: newAttachments(),
		autoRemove: map[string]bool{},
	}
	if c.policy != nil {
		s.policy = *c.policy
	}
	s.log, s.build = c.log, c.build
	s.routes()
	return s
}

// Handler is the HTTP handler serving every endpoint, versioned or not.
func (s *Server) Handler() http.Handler {
	h := recoverPanics(withVersion(s.mux))
	if s.log != nil {
		h = logRequests(s.log, h)
	}
	return h
}

// Serve answers requests on l until ctx ends, then shuts down gracefully.
// While it runs, container reads are cached and kept fresh by the
// backend's events.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	cctx, stopCache := context.WithCancel(ctx)
	defer stopCache()
	go s.cache.run(cctx)
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx) // hijacked streams are not tracked by Shutdown
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func serverHeader() string { return "cornus/" + buildinfo.Version() + " (linux)" }

// logRequests logs each request once it is answered.
func logRequests(w io.Writer, next http.Handler) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		mu.Lock()
		fmt.Fprintf(w, "%s %s %s -> %d (%s)%s\n", start.Format(time.TimeOnly), r.Method, r.URL.RequestURI(), sw.status, time.Since(start).Round(time.Microsecond), sw.errBody)
		mu.Unlock()
	})
}

// statusWriter records the status code; it keeps Flush and Hijack working.
type statusWriter struct {
	http.ResponseWriter
	status  int
	errBody string // start of an error answer's body, for the log
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status >= 400 && len(s.errBody) < 300 {
		s.errBody += " " + strings.TrimSpace(string(p[:min(len(p), 300)]))
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
func (s *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	s.status = http.StatusSwitchingProtocols
	return http.NewResponseController(s.ResponseWriter).Hijack()
}
