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
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/buildinfo"
	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/server/api"
)

// Environment the server reads.
const (
	EnvTokensFile   = "CORNUS_TOKENS_FILE"
	EnvAdvertiseURL = "CORNUS_ADVERTISE_URL"
	// EnvAdvertiseCA names a PEM file of the CA companions trust for the
	// advertised URL (a private or self-signed certificate: the chart's).
	EnvAdvertiseCA  = "CORNUS_ADVERTISE_CA"
	EnvRegistryHost = "CORNUS_REGISTRY_HOST"
	// EnvRegistryQuota bounds what one tenant keeps in the registry
	// (a size: 20GiB; default DefaultRegistryQuota).
	EnvRegistryQuota = "CORNUS_REGISTRY_QUOTA"
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
	AdvertiseCA    string // PEM: the CA companions trust for it ("": the system's)
	// RegistryHost is how a backend's nodes reach the registry
	// (host:port; registrynodes.go); default: the address served on.
	RegistryHost string
	// RegistryQuota bounds the bytes one tenant's registry repositories
	// keep (registryquota.go); 0: CORNUS_REGISTRY_QUOTA, else
	// DefaultRegistryQuota.
	RegistryQuota int64
	Environ       []string
	Log           *slog.Logger
}

// Server is one cornus serve.
type Server struct {
	cfg    Config
	b      backends.Backend
	e      *engine.Engine
	tokens *tokens
	owners *owners
	// imageOwners are who loaded which images (imageowners.go); loadMu
	// serializes loads, whose names are checked before they are written.
	imageOwners *imageOwners
	loadMu      sync.Mutex
	live        liveSet
	stopWatch   chan struct{}
	watchOnce   sync.Once
	closeOnce   sync.Once
	sessions    *sessions
	policies    *policies
	credentials *serviceGrants
	// dockers are the services with the docker role; dockerEndpoints
	// serve it (docker.go).
	// siblings: the remote mode's companions run beside their apps and
	// dial them by the address the server names (backends.SiblingCompanions).
	siblings        bool
	dockers         *serviceGrants
	dockerEndpoints *dockerEndpoints
	relays          relays
	agents          agents
	// remote is the backend's remote mode (server/remote.go), remoteVar
	// the variable that turns it on ("" when the backend has none).
	remote    bool
	remoteVar string
	// mountsOnly: the backend's remote mode moves only mounts and
	// credentials next to the app (backends.RemoteMountsOnly); remoteDial:
	// companions dial the workloads and serve agents.
	mountsOnly, remoteDial bool
	log                    *slog.Logger
	readiness              readiness
	// hostPolicy is what clients' specs may take from this host; the
	// engine's allows mountsDir as well, where client-local mounts are.
	hostPolicy hostpolicy.Policy
	mountsDir  string
	// builder builds tenants' images (build.go), reading their files from
	// their clients.
	builder *builder.Builder
	// registry is the OCI registry on /v2/ (registry.go).
	registry   *registry.Handler
	registryGC func(context.Context, time.Duration) (registry.GCStats, error) // nil: the backend's store
	regStore   registry.Store
	pullKey    []byte // the nodes' pull credentials' (registrynodes.go)
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
	t, err := newTokens(cfg.TokensFile, state, cfg.Log)
	if err != nil {
		return nil, err
	}
	own, found, err := loadOwners(filepath.Join(state, "projects.json"))
	if err != nil {
		return nil, err
	}
	if !found {
		n, err := own.seed(ctx, b)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			cfg.Log.Info("project owners: recorded the owners of projects an earlier server deployed", "projects", n)
		}
	}
	imgOwn, err := loadImageOwners(filepath.Join(state, "images.json"))
	if err != nil {
		return nil, err
	}
	if cfg.RegistryQuota, err = registryQuota(cfg); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, b: b, tokens: t, owners: own, imageOwners: imgOwn, log: cfg.Log, mountsDir: filepath.Join(cfg.DataDir, "mounts"),
		stopWatch: make(chan struct{})}
	s.setRemote(b)
	s.hostPolicy = hostpolicy.FromEnv(cfg.Environ, "")
	withMounts := s.hostPolicy
	withMounts.BindPrefixes = append(slices.Clone(withMounts.BindPrefixes), s.mountsDir)
	s.e = engine.New(b, engine.WithEnviron(cfg.Environ), engine.WithLockDir(filepath.Join(state, "locks")),
		engine.WithPolicy(withMounts), engine.WithoutHostFiles(),
		engine.WithCompanions(&caretaker.Companions{Backend: b, Environ: cfg.Environ, Server: cfg.AdvertiseURL, ServerCA: cfg.AdvertiseCA, Remote: s.remote, MountsOnly: s.mountsOnly, Sibling: s.siblings}))
	if s.registry, err = newRegistry(state, s); err != nil {
		return nil, err
	}
	builds := b
	if s.nodesPull() {
		builds = registryBuilds{Backend: b, s: s, spool: filepath.Join(state, "uploads")}
	}
	s.builder = builder.New(builds, cfg.Environ)
	grace, err := sessionGrace(cfg.Environ)
	if err != nil {
		return nil, err
	}
	s.sessions = newSessions(s, filepath.Join(state, "sessions.json"), grace)
	s.policies = newPolicies(filepath.Join(state, "egress"))
	s.credentials = newServiceGrants(filepath.Join(state, "credentials"), declaredCredentials)
	s.dockers = newServiceGrants(filepath.Join(state, "docker"), declaredDocker)
	s.dockerEndpoints = newDockerEndpoints()
	if err := s.sessions.reconcile(); err != nil {
		return nil, err
	}
	// The previous run's client-local mounts died with it (this process
	// served them); a resumed session's deployment does not get them back.
	if err := sweepMounts(s.mountsDir); err != nil {
		return nil, err
	}
	return s, nil
}

// TokensFile is the client tokens file the server reads.
func (s *Server) TokensFile() string { return s.cfg.TokensFile }

// Handler is the deploy API. Its first call starts the watcher that
// ends what revoked tokens opened (Close stops it).
func (s *Server) Handler() http.Handler {
	s.watchOnce.Do(func() {
		go s.watch(s.stopWatch)
		go s.collectRegistry(s.stopWatch)
	})
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		if rt.caretaker {
			mux.Handle(rt.pattern, s.caretaker(rt.h))
		} else {
			mux.Handle(rt.pattern, s.client(rt.free, rt.h))
		}
	}
	// The registry answers its own 401s (the challenge registry clients
	// follow) and checks tokens itself.
	mux.Handle("/v2/", s.registry)
	// Probes (a Deployment's, a load balancer's): no token, nothing told
	// but whether the server and its backend answer.
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	return s.logged(mux)
}

// Close ends the sessions (waiting, bounded, for what their ends do:
// nothing writes the server's state after it returns), stops the
// server's watcher and what its builds started (a buildkitd).
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.sessions.closeAll()
		close(s.stopWatch)
		_ = s.builder.Close()
	})
}

type route struct {
	pattern   string
	h         func(http.ResponseWriter, *http.Request, identity)
	free      freeProject // on a project route: a project name nobody owns
	caretaker bool        // the relay: caretaker tokens only
}

func (s *Server) routes() []route {
	return []route{
		{pattern: "GET /v1/info", h: s.info},
		{pattern: "GET /v1/projects", h: s.listProjects},
		{pattern: "POST /v1/projects/{project}/up", h: s.up, free: freeServed},
		{pattern: "POST /v1/projects/{project}/down", h: s.down, free: freeEmpty},
		{pattern: "GET /v1/projects/{project}/ps", h: s.ps, free: freeEmpty},
		{pattern: "GET /v1/projects/{project}/logs", h: s.logs, free: freeEmpty},
		{pattern: "GET /v1/projects/{project}/attach", h: s.attach},
		{pattern: "POST /v1/projects/{project}/adopt", h: s.adopt, free: unowned},
		{pattern: "POST /v1/projects/{project}/{verb}", h: s.lifecycle},
		{pattern: "GET /v1/projects/{project}/port", h: s.port},
		{pattern: "GET /v1/projects/{project}/top", h: s.top, free: freeEmpty},
		{pattern: "GET /v1/projects/{project}/stats", h: s.stats, free: freeEmpty},
		{pattern: "GET /v1/projects/{project}/archive", h: s.archive},
		{pattern: "PUT /v1/projects/{project}/archive", h: s.archivePut},
		{pattern: "GET /v1/projects/{project}/export", h: s.export},
		{pattern: "POST /v1/projects/{project}/commit", h: s.commit},
		{pattern: "GET /v1/projects/{project}/images", h: s.images, free: freeEmpty},
		{pattern: "GET /v1/projects/{project}/volumes", h: s.volumes, free: freeEmpty},
		{pattern: "GET /v1/projects/{project}/exec", h: s.exec},
		{pattern: "GET /v1/projects/{project}/run", h: s.run, free: freeServed},
		{pattern: "POST /v1/projects/{project}/wait", h: s.wait},
		{pattern: "GET /v1/projects/{project}/attach-stdio", h: s.attachStdio},
		{pattern: "GET /v1/projects/{project}/session", h: s.session, free: freeServed},
		{pattern: "POST /v1/warnings", h: s.warnings},
		{pattern: "GET /v1/events", h: s.events},
		{pattern: "POST /v1/projects/{project}/build", h: s.build, free: freeServed},
		{pattern: "POST /v1/projects/{project}/pull", h: s.pull, free: freeServed},
		{pattern: "POST /v1/projects/{project}/push", h: s.push, free: freeServed},
		{pattern: "GET /v1/images", h: s.listImages},
		{pattern: "GET /v1/images/inspect", h: s.inspectImage},
		{pattern: "POST /v1/images/load", h: s.loadImage},
		{pattern: "GET /v1/relay/{project}", h: s.relay, caretaker: true},
	}
}

// Routes lists every route, for the auth test's walk.
func Routes() []string {
	var out []string
	for _, rt := range (&Server{}).routes() {
		p := rt.pattern
		if strings.HasSuffix(p, "/{verb}") {
			p = strings.TrimSuffix(p, "{verb}") + "stop"
		}
		out = append(out, p)
	}
	return out
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
	s.cfg.RegistryHost = registryHost(s.cfg, ln.Addr()) // before any request
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
	s.Close()
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

// rootless asks a backend that can tell (backends.FeatureRootless)
// whether it runs rootless.
func rootless(ctx context.Context, b backends.Backend) bool {
	if r, err := backends.Want[backends.RootlessReporter](b, backends.FeatureRootless, "rootless"); err == nil {
		yes, err := r.Rootless(ctx)
		return err == nil && yes
	}
	return false
}
