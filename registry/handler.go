package registry

import (
	"context"
	_ "crypto/sha512" // sha512 digests, which OCI content may use
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
)

// Config is how a registry Handler runs.
type Config struct {
	Store Store
	Auth  Auth // nil: Open
	// UploadDir holds upload sessions in progress.
	UploadDir string
	// MaxBlob bounds one blob (default 16 GiB); MaxManifest one
	// manifest (default 4 MiB, as distribution).
	MaxBlob, MaxManifest int64
	// UploadQuota bounds the bytes one principal's unfinished uploads
	// hold (default 32 GiB); UploadTTL is how long an untouched upload
	// is kept (default 1 h).
	UploadQuota int64
	UploadTTL   time.Duration
	// Service names the registry in its token challenge ("cornus").
	Service string
	// Authenticated, when set, is told who each request is (for the
	// caller's request log).
	Authenticated func(r *http.Request, principal string)
	// AdmitManifest, when set, is asked before a manifest is stored (the
	// caller's quota on what a principal keeps: Usage); its error
	// refuses the push with 403 DENIED, saying why.
	AdmitManifest func(ctx context.Context, principal, repo string, m Manifest) error
}

// Handler serves /v2/.
type Handler struct {
	cfg     Config
	uploads *uploads
}

// New returns the handler of cfg; its upload directory is created and
// swept of sessions a previous run left.
func New(cfg Config) (*Handler, error) {
	if cfg.Auth == nil {
		cfg.Auth = Open{}
	}
	if cfg.MaxBlob == 0 {
		cfg.MaxBlob = 16 << 30
	}
	if cfg.MaxManifest == 0 {
		cfg.MaxManifest = 4 << 20
	}
	if cfg.UploadQuota == 0 {
		cfg.UploadQuota = 32 << 30
	}
	if cfg.UploadTTL == 0 {
		cfg.UploadTTL = time.Hour
	}
	if cfg.Service == "" {
		cfg.Service = "cornus"
	}
	u, err := newUploads(cfg.UploadDir, cfg.UploadTTL)
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, uploads: u}, nil
}

// The repository name grammar of the distribution spec.
var (
	nameRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$`)
	tagRE  = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)
)

// request is a routed /v2/ request: who, which repository, and the
// rest of the path after it.
type request struct {
	w         http.ResponseWriter
	r         *http.Request
	principal string
	repo      string
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	path := r.URL.Path
	if path == "/v2/token" || path == "/v2/token/" {
		h.token(w, r)
		return
	}
	principal, ok := h.cfg.Auth.Authenticate(secret(r))
	if !ok {
		h.challenge(w, r)
		return
	}
	if h.cfg.Authenticated != nil {
		h.cfg.Authenticated(r, principal)
	}
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok && path != "/v2" {
		writeError(w, http.StatusNotFound, codeNameUnknown, "not a registry path")
		return
	}
	switch rest {
	case "":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
		return
	case "_catalog":
		h.catalog(w, r, principal)
		return
	}
	repo, op, arg, ok := splitPath(rest)
	if !ok {
		writeError(w, http.StatusNotFound, codeNameUnknown, "unknown path "+path)
		return
	}
	if len(repo) > 255 || !nameRE.MatchString(repo) {
		writeError(w, http.StatusBadRequest, codeNameInvalid, fmt.Sprintf("repository name %q is not valid", repo))
		return
	}
	q := &request{w: w, r: r, principal: principal, repo: repo}
	switch op {
	case "manifests":
		h.manifests(q, arg)
	case "blobs":
		h.blobs(q, arg)
	case "uploads":
		h.upload(q, arg)
	case "tags":
		h.tags(q)
	case "referrers":
		h.referrers(q, arg)
	}
}

// splitPath splits NAME/OP/ARG, NAME holding slashes: the last
// /manifests/, /blobs/uploads/, /blobs/, /tags/list or /referrers/ ends it.
func splitPath(rest string) (repo, op, arg string, ok bool) {
	if repo, ok := strings.CutSuffix(rest, "/tags/list"); ok {
		return repo, "tags", "", true
	}
	for _, m := range []struct{ sep, op string }{
		{"/blobs/uploads/", "uploads"}, {"/blobs/uploads", "uploads"},
		{"/manifests/", "manifests"}, {"/blobs/", "blobs"}, {"/referrers/", "referrers"},
	} {
		i := strings.LastIndex(rest, m.sep)
		if i <= 0 {
			continue
		}
		arg := rest[i+len(m.sep):]
		if m.op != "uploads" && (arg == "" || strings.Contains(arg, "/")) {
			continue
		}
		if m.op == "uploads" && strings.Contains(arg, "/") {
			continue
		}
		return rest[:i], m.op, arg, true
	}
	return "", "", "", false
}

// secret is the request's credential: a Bearer token, or the password of
// Basic (docker login's token-as-password).
func secret(r *http.Request) string {
	v := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(v, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	if _, p, ok := r.BasicAuth(); ok {
		return p
	}
	return ""
}

// challenge answers 401 with the Bearer challenge Docker and containerd
// follow to the token endpoint.
func (h *Handler) challenge(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s://%s/v2/token",service=%q`, scheme, r.Host, h.cfg.Service))
	writeError(w, http.StatusUnauthorized, codeUnauthorized, "authentication required: a cornus token (docker login: any user name, the token as password)")
}

// token is the token endpoint: Basic credentials (the cornus token as
// password) in, the same token out as the Bearer token, which every
// request is checked with anew (a revoked token stops at once).
func (h *Handler) token(w http.ResponseWriter, r *http.Request) {
	s := secret(r)
	if _, ok := h.cfg.Auth.Authenticate(s); !ok || s == "" {
		if _, ok := h.cfg.Auth.(Open); !ok {
			h.challengeBasic(w)
			return
		}
		s = "anonymous"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token": s, "access_token": s, "expires_in": 3600,
		"issued_at": time.Now().UTC().Format(time.RFC3339),
	})
}

func (h *Handler) challengeBasic(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Basic realm=%q`, h.cfg.Service))
	writeError(w, http.StatusUnauthorized, codeUnauthorized, "a cornus token is the password")
}

// authorize checks the principal may do a to the repository, answering
// the refusal itself.
func (h *Handler) authorize(q *request, a Action) bool {
	err := h.cfg.Auth.Authorize(q.r.Context(), q.principal, q.repo, a)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrNotFound):
		writeError(q.w, http.StatusNotFound, codeNameUnknown, fmt.Sprintf("repository %s not found", q.repo))
	case errors.Is(err, ErrDenied):
		writeError(q.w, http.StatusForbidden, codeDenied, err.Error())
	default:
		serverError(q.w, err)
	}
	return false
}

// storeError answers a store's refusal of a write.
func storeError(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrUnsupported) {
		writeError(w, http.StatusBadRequest, codeUnsupported, err.Error())
		return
	}
	serverError(w, err)
}

func serverError(w http.ResponseWriter, err error) {
	writeError(w, http.StatusInternalServerError, codeUnsupported, err.Error())
}

// parseDigest parses a digest whose algorithm this registry computes.
func parseDigest(s string) (digest.Digest, bool) {
	d, err := digest.Parse(s)
	return d, err == nil && d.Algorithm().Available()
}
