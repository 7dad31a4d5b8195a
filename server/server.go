package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/buildinfo"
	"github.com/cornus-dev/cornus/server/api"
)

// Environment the server reads.
const (
	EnvTokensFile   = "CORNUS_TOKENS_FILE"
	EnvAdvertiseURL = "CORNUS_ADVERTISE_URL"
)

// Config is how cornus serve runs.
type Config struct {
	Listen         string // host:port
	TLSCert        string
	TLSKey         string
	InsecureListen bool   // allow plain HTTP off loopback
	DataDir        string // <CORNUS_DATA_DIR>/server holds tokens and sessions
	TokensFile     string // default <DataDir>/server/tokens
	AdvertiseURL   string // what companions dial back to
	Environ        []string
	Log            *slog.Logger
}

// Server is one cornus serve.
type Server struct {
	cfg      Config
	b        backends.Backend
	e        *engine.Engine
	tokens   *tokens
	sessions *sessions
	policies *policies
	relays   relays
	agents   agents
	// remote is the backend's remote mode (server/remote.go).
	remote bool
	log    *slog.Logger
	// hostPolicy is what clients' specs may take from this host; the
	// engine's allows mountsDir as well, where client-local mounts are.
	hostPolicy hostpolicy.Policy
	mountsDir  string
}

// TokensFile is where client tokens are read: CORNUS_TOKENS_FILE, else
// <dataDir>/server/tokens.
func TokensFile(environ []string, dataDir string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, EnvTokensFile+"="); ok && v != "" {
			return v
		}
	}
	return filepath.Join(dataDir, "server", "tokens")
}

// New prepares a server over backend b: tokens loaded, the sessions of a
// previous run reconciled (their non-detached deployments removed).
func New(ctx context.Context, b backends.Backend, cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.TokensFile == "" {
		cfg.TokensFile = TokensFile(cfg.Environ, cfg.DataDir)
	}
	state := filepath.Join(cfg.DataDir, "server")
	t, err := newTokens(cfg.TokensFile, filepath.Join(state, "caretakers.json"))
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, b: b, tokens: t, log: cfg.Log, mountsDir: filepath.Join(cfg.DataDir, "mounts"),
		remote: remoteMode(b.Name(), cfg.Environ)}
	s.hostPolicy = hostpolicy.FromEnv(cfg.Environ, "")
	withMounts := s.hostPolicy
	withMounts.BindPrefixes = append(slices.Clone(withMounts.BindPrefixes), s.mountsDir)
	s.e = engine.New(b, engine.WithEnviron(cfg.Environ), engine.WithLockDir(filepath.Join(state, "locks")),
		engine.WithPolicy(withMounts),
		engine.WithCompanions(&caretaker.Companions{Backend: b, Environ: cfg.Environ, Server: cfg.AdvertiseURL, Remote: s.remote}))
	s.sessions = newSessions(s, filepath.Join(state, "sessions.json"))
	s.policies = newPolicies(filepath.Join(state, "egress"))
	if err := s.sessions.reconcile(ctx); err != nil {
		return nil, err
	}
	// After reconcile: the deployments that used them are gone.
	if err := sweepMounts(s.mountsDir); err != nil {
		return nil, err
	}
	return s, nil
}

// TokensFile is the client tokens file the server reads.
func (s *Server) TokensFile() string { return s.cfg.TokensFile }

// Handler is the deploy API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, h func(http.ResponseWriter, *http.Request, identity)) {
		mux.Handle(pattern, s.client(h))
	}
	route("GET /v1/info", s.info)
	route("GET /v1/projects", s.listProjects)
	route("POST /v1/projects/{project}/up", s.up)
	route("POST /v1/projects/{project}/down", s.down)
	route("GET /v1/projects/{project}/ps", s.ps)
	route("GET /v1/projects/{project}/logs", s.logs)
	route("GET /v1/projects/{project}/attach", s.attach)
	route("POST /v1/projects/{project}/{verb}", s.lifecycle)
	route("GET /v1/projects/{project}/port", s.port)
	route("GET /v1/projects/{project}/top", s.top)
	route("GET /v1/projects/{project}/images", s.images)
	route("GET /v1/projects/{project}/exec", s.exec)
	route("GET /v1/projects/{project}/session", s.session)
	route("POST /v1/warnings", s.warnings)
	route("GET /v1/events", s.events)
	route("GET /v1/images", s.listImages)
	route("POST /v1/images/load", s.loadImage)
	mux.Handle("GET /v1/relay/{project}", s.caretaker(s.relay))
	return s.logged(mux)
}

// Routes lists every route, for the auth test's walk.
func Routes() []string {
	return []string{
		"GET /v1/info", "GET /v1/projects", "POST /v1/projects/{project}/up", "POST /v1/projects/{project}/down",
		"GET /v1/projects/{project}/ps", "GET /v1/projects/{project}/logs", "GET /v1/projects/{project}/attach",
		"POST /v1/projects/{project}/stop", "GET /v1/projects/{project}/port", "GET /v1/projects/{project}/top",
		"GET /v1/projects/{project}/images", "GET /v1/projects/{project}/exec", "GET /v1/projects/{project}/session",
		"POST /v1/warnings", "GET /v1/events", "GET /v1/images", "POST /v1/images/load", "GET /v1/relay/{project}",
	}
}

// Limits on what a client may send and how slowly.
const (
	maxHeaderBytes  = 64 << 10
	maxSpecBody     = 16 << 20         // a spec with file contents (configs, secrets)
	maxImageBody    = 8 << 30          // an image archive
	readHeaderLimit = 10 * time.Second // slowloris
	bodyReadLimit   = 60 * time.Second // small bodies; image uploads get longer
)

// Serve listens and serves until ctx ends, then shuts down gracefully:
// no new requests, running ones get shutdownGrace, sessions are closed
// (their deployments stay until their grace, see sessions).
func (s *Server) Serve(ctx context.Context, ready func(addr string)) error {
	if err := s.checkListen(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	hs := s.httpServer(ctx)
	if s.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, hs.TLSConfig)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.sessions.closeAll()
	err = hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	return err
}

// httpServer is the HTTP server with its limits: header size and time
// (slowloris), idle connections.
func (s *Server) httpServer(ctx context.Context) *http.Server {
	return &http.Server{
		Handler: s.Handler(), ReadHeaderTimeout: readHeaderLimit, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: maxHeaderBytes, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// checkListen refuses plain HTTP off loopback unless asked: tokens would
// cross the network in the clear.
func (s *Server) checkListen() error {
	if s.cfg.TLSCert != "" || s.cfg.InsecureListen {
		if (s.cfg.TLSCert == "") != (s.cfg.TLSKey == "") {
			return errors.New("--tls-cert and --tls-key go together")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", s.cfg.Listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("--listen %s: plain HTTP is served on loopback only; give --tls-cert and --tls-key, or --insecure-listen to accept sending tokens in the clear", s.cfg.Listen)
}

func (s *Server) info(w http.ResponseWriter, r *http.Request, id identity) {
	writeJSON(w, http.StatusOK, api.Info{Version: buildinfo.Version(), Backend: s.b.Name(), Rootless: rootless(r.Context(), s.b), Tenant: id.tenant})
}

// rootless asks a backend that can tell (podman) whether it runs
// rootless.
func rootless(ctx context.Context, b backends.Backend) bool {
	if r, ok := b.(interface {
		Rootless(context.Context) (bool, error)
	}); ok {
		yes, err := r.Rootless(ctx)
		return err == nil && yes
	}
	return false
}
