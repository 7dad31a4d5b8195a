package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/server/api"
)

var (
	errNoToken      = fmt.Errorf("%w: a bearer token is required (cornus login URL, or CORNUS_TOKEN)", errdefs.ErrUnauthenticated)
	errBadToken     = fmt.Errorf("%w: the token is not valid for this server", errdefs.ErrUnauthenticated)
	errCaretakerTok = fmt.Errorf("%w: a caretaker token is valid only on its deployment's relay", errdefs.ErrPermissionDenied)
	errClientTok    = fmt.Errorf("%w: the relay takes the deployment's caretaker token", errdefs.ErrPermissionDenied)
)

// How a project route treats a project nobody owns and nothing of is
// on the backend (a name still free).
type freeProject int

const (
	freeRefused freeProject = iota // 404: no such project of yours
	freeServed                     // the handler runs (up claims it; a session waits for an up)
	freeEmpty                      // answered as for a project with nothing in it
	// unowned: the handler runs for any project the caller does not own
	// (adopt: an operator's verb, which checks for itself).
	unowned
)

// client admits requests with a client token; on a project route, only
// the project's owner, or anyone for a free name as free says. Every
// request is ended if its token is revoked while it runs.
func (s *Server) client(free freeProject, h func(http.ResponseWriter, *http.Request, identity)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := s.identify(r)
		if err == nil && id.tenant == "" {
			err = errCaretakerTok
		}
		if err != nil {
			writeError(w, err)
			return
		}
		noteTenant(r, id.tenant)
		project := r.PathValue("project")
		if project != "" {
			if err := validProject(project); err != nil {
				writeError(w, err)
				return
			}
			if !s.owners.owns(id.tenant, project) && free != unowned {
				if err := s.freeName(r, project); err != nil {
					writeError(w, err)
					return
				}
				switch free {
				case freeRefused:
					writeError(w, fmt.Errorf("%w: no project %s of yours", errdefs.ErrNotFound, project))
					return
				case freeEmpty:
					emptyAnswer(w, r)
					return
				}
			}
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer s.live.add(id, project, cancel)()
		h(w, r.WithContext(ctx), id)
	})
}

// freeName refuses a project that is not free: another tenant's, or on
// the backend without an owner.
func (s *Server) freeName(r *http.Request, project string) error {
	if _, ok := s.owners.get(project); ok {
		return notYours(project)
	}
	exists, err := present(r.Context(), s.b, project)
	if err != nil {
		return err
	}
	if exists {
		return notYours(project)
	}
	return nil
}

// emptyAnswer answers a read of a free project name as docker compose
// does for a project with nothing in it.
func emptyAnswer(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.Pattern, "/down"):
		newFrames(w).finish(struct{}{}, nil)
	case strings.HasSuffix(r.Pattern, "/logs"):
		newFlushWriter(w, "text/plain; charset=utf-8")
	case strings.HasSuffix(r.Pattern, "/top"):
		writeJSON(w, http.StatusOK, map[string]any{})
	default: // ps, images
		writeJSON(w, http.StatusOK, []any{})
	}
}

// caretaker admits requests with a caretaker token of the path's
// project's live deployment generation.
func (s *Server) caretaker(h func(http.ResponseWriter, *http.Request, identity)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := s.identify(r)
		switch {
		case err != nil:
		case id.tenant != "":
			err = errClientTok
		case id.caretaker.Project != r.PathValue("project"):
			err = fmt.Errorf("%w: this caretaker token belongs to another deployment", errdefs.ErrPermissionDenied)
		case !s.owners.holds(*id.caretaker):
			err = fmt.Errorf("%w: this caretaker token's deployment has ended", errdefs.ErrPermissionDenied)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		h(w, r, id)
	})
}

func (s *Server) identify(r *http.Request) (identity, error) {
	tok := bearer(r.Header.Get("Authorization"))
	if tok == "" {
		return identity{}, errNoToken
	}
	id, ok := s.tokens.authenticate(tok)
	if !ok {
		return identity{}, errBadToken
	}
	return id, nil
}

// logged writes one structured line per request: never a token, never a
// query string (it may hold paths and names, not secrets, but stays out).
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		rid := make([]byte, 6)
		_, _ = rand.Read(rid)
		info := &requestInfo{}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
		if probe := r.URL.Path == "/healthz" || r.URL.Path == "/readyz"; probe && rec.status == http.StatusOK {
			return // a probe every few seconds: only its failures are news
		}
		s.log.Info("request", "id", hex.EncodeToString(rid), "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "tenant", info.tenant, "remote", r.RemoteAddr,
			"duration_ms", time.Since(start).Milliseconds())
	})
}

// requestInfo carries what the auth layer learned back to the log line.
type requestInfo struct{ tenant string }

type requestInfoKey struct{}

func noteTenant(r *http.Request, tenant string) {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.tenant = tenant
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController and websocket.Accept reach the
// connection (flush, hijack).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	e, status := api.ErrorOf(err)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cornus"`)
	}
	writeJSON(w, status, e)
}

// decodeBody reads a JSON body of at most maxSpecBody bytes within
// bodyReadLimit.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadLimit))
	body := http.MaxBytesReader(w, r.Body, maxSpecBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if _, ok := err.(*http.MaxBytesError); ok {
			return fmt.Errorf("%w: the request body is larger than %d bytes", errdefs.ErrOutOfRange, maxSpecBody)
		}
		if err == io.EOF {
			return fmt.Errorf("%w: the request needs a JSON body", errdefs.ErrInvalidArgument)
		}
		return fmt.Errorf("%w: request body: %v", errdefs.ErrInvalidArgument, err)
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return nil
}
