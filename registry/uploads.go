package registry

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
)

// uploads are the blob upload sessions in progress: one file each under
// dir, with who opened it for which repository beside it. Nothing of an
// upload reaches the store before its digest is verified.
type uploads struct {
	dir string
	ttl time.Duration

	mu       sync.Mutex
	sessions map[string]*session
}

// A session's mu serializes its requests. Size and Touched change only
// under both mu and the uploads' mu (grow), so the uploads' totals and
// sweep read them under the latter alone.
type session struct {
	ID, Repo, Principal string
	Size                int64
	Touched             time.Time
	mu                  sync.Mutex
	// sum is the SHA-256 of the bytes written so far, kept as they
	// arrive so that finishing does not read the upload again; nil once
	// a write failed (finish then reads the file).
	sum hash.Hash
}

func newUploads(dir string, ttl time.Duration) (*uploads, error) {
	if dir == "" {
		return nil, errors.New("registry: no upload directory")
	}
	// Sessions of an earlier run are dropped: a client resumes a broken
	// upload by starting again.
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("registry uploads: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("registry uploads: %w", err)
	}
	return &uploads{dir: dir, ttl: ttl, sessions: map[string]*session{}}, nil
}

func (u *uploads) path(id string) string { return filepath.Join(u.dir, id) }

// open starts a session for principal's push to repo.
func (u *uploads) open(repo, principal string) (*session, error) {
	u.sweep()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	s := &session{ID: hex.EncodeToString(b), Repo: repo, Principal: principal, Touched: time.Now(), sum: sha256.New()}
	f, err := os.OpenFile(u.path(s.ID), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	u.mu.Lock()
	u.sessions[s.ID] = s
	u.mu.Unlock()
	return s, nil
}

// get finds the session id of principal's push to repo.
func (u *uploads) get(id, repo, principal string) (*session, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s, ok := u.sessions[id]
	if !ok || s.Repo != repo || s.Principal != principal {
		return nil, false
	}
	return s, true
}

// grow records n more bytes written to s (whose mu the caller holds).
func (u *uploads) grow(s *session, n int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s.Size += n
	s.Touched = time.Now()
}

// held is the bytes principal's sessions hold.
func (u *uploads) held(principal string) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	var n int64
	for _, s := range u.sessions {
		if s.Principal == principal {
			n += s.Size
		}
	}
	return n
}

func (u *uploads) close(s *session) {
	u.mu.Lock()
	delete(u.sessions, s.ID)
	u.mu.Unlock()
	_ = os.Remove(u.path(s.ID))
}

// sweep drops sessions untouched for the TTL (abandoned uploads).
func (u *uploads) sweep() {
	u.mu.Lock()
	var old []*session
	for _, s := range u.sessions {
		if time.Since(s.Touched) > u.ttl {
			old = append(old, s)
		}
	}
	u.mu.Unlock()
	for _, s := range old {
		u.close(s)
	}
}

// upload serves /v2/NAME/blobs/uploads/[ID].
func (h *Handler) upload(q *request, id string) {
	if !h.authorize(q, Push) {
		return
	}
	if id == "" {
		if q.r.Method != http.MethodPost {
			methodNotAllowed(q.w)
			return
		}
		h.startUpload(q)
		return
	}
	s, ok := h.uploads.get(id, q.repo, q.principal)
	if !ok {
		writeError(q.w, http.StatusNotFound, codeBlobUploadUnknown, "upload "+id+" not found")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch q.r.Method {
	case http.MethodGet:
		h.uploadStatus(q, s, http.StatusNoContent)
	case http.MethodPatch:
		if h.appendChunk(q, s) {
			h.uploadStatus(q, s, http.StatusAccepted)
		}
	case http.MethodPut:
		if q.r.ContentLength != 0 && !h.appendChunk(q, s) {
			return
		}
		h.finish(q, s, q.r.URL.Query().Get("digest"))
	case http.MethodDelete:
		h.uploads.close(s)
		q.w.Header().Set("Content-Length", "0")
		q.w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(q.w)
	}
}

// startUpload is POST: a cross-repository mount, a monolithic upload
// (?digest= with the body), or a session to PATCH into.
func (h *Handler) startUpload(q *request) {
	query := q.r.URL.Query()
	if m := query.Get("mount"); m != "" {
		if h.mount(q, m, query.Get("from")) {
			return
		}
	}
	s, err := h.uploads.open(q.repo, q.principal)
	if err != nil {
		serverError(q.w, err)
		return
	}
	if d := query.Get("digest"); d != "" {
		// Monolithic: the session is never shown, so it ends here.
		s.mu.Lock()
		defer s.mu.Unlock()
		defer h.uploads.close(s)
		if h.appendChunk(q, s) {
			h.finish(q, s, d)
		}
		return
	}
	h.uploadStatus(q, s, http.StatusAccepted)
}

// mount links blob m from repository from into q.repo when the
// principal may read it there; false (a mount with no from included):
// start an upload instead, as the spec lets a registry do.
func (h *Handler) mount(q *request, m, from string) bool {
	d, ok := parseDigest(m)
	if !ok || from == "" || !nameRE.MatchString(from) {
		return false
	}
	if h.cfg.Auth.Authorize(q.r.Context(), q.principal, from, Pull) != nil {
		return false
	}
	if _, err := h.cfg.Store.Blob(q.r.Context(), from, d); err != nil {
		return false
	}
	if err := h.cfg.Store.LinkBlob(q.r.Context(), q.repo, d); err != nil {
		return false
	}
	created(q, blobURL(q.repo, d.String()), d.String())
	return true
}

// sessionHeaders say where s is and how much of it is written.
func sessionHeaders(q *request, s *session) {
	hdr := q.w.Header()
	hdr.Set("Location", "/v2/"+q.repo+"/blobs/uploads/"+s.ID)
	hdr.Set("Docker-Upload-UUID", s.ID)
	hdr.Set("Range", fmt.Sprintf("0-%d", max(s.Size-1, 0)))
}

func (h *Handler) uploadStatus(q *request, s *session, status int) {
	sessionHeaders(q, s)
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(status)
}

// appendChunk writes the request's body at the session's end; a
// Content-Range that does not start there is 416, a chunk past the
// bounds 413.
func (h *Handler) appendChunk(q *request, s *session) bool {
	if cr := q.r.Header.Get("Content-Range"); cr != "" {
		start, _, ok := strings.Cut(strings.TrimPrefix(cr, "bytes="), "-")
		n, err := strconv.ParseInt(start, 10, 64)
		if !ok || err != nil || n != s.Size {
			h.uploadRangeError(q, s)
			return false
		}
	}
	room := min(h.cfg.MaxBlob-s.Size, h.cfg.UploadQuota-h.uploads.held(q.principal))
	if q.r.ContentLength > room {
		h.uploads.close(s) // it cannot be finished
		writeError(q.w, http.StatusRequestEntityTooLarge, codeSizeInvalid, fmt.Sprintf("the upload would pass its bound (%d bytes a blob, %d a principal's uploads): dropped", h.cfg.MaxBlob, h.cfg.UploadQuota))
		return false
	}
	f, err := os.OpenFile(h.uploads.path(s.ID), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		serverError(q.w, err)
		return false
	}
	defer f.Close()
	var w io.Writer = f
	if s.sum != nil {
		w = io.MultiWriter(f, s.sum)
	}
	n, err := io.Copy(w, io.LimitReader(q.r.Body, room+1))
	if err != nil {
		s.sum = nil // the file and the sum may differ by a partial write
	}
	h.uploads.grow(s, n)
	if n > room {
		h.uploads.close(s)
		writeError(q.w, http.StatusRequestEntityTooLarge, codeSizeInvalid, "the upload passed its bound: dropped")
		return false
	}
	if err != nil {
		writeError(q.w, http.StatusBadRequest, codeBlobUploadInvalid, "reading the chunk: "+err.Error())
		return false
	}
	return true
}

// verified reports whether the session's bytes (in f) are d: by the sum
// kept as they arrived, else by reading them.
func verified(s *session, f io.Reader, d digest.Digest) (bool, error) {
	if s.sum != nil && d.Algorithm() == digest.SHA256 {
		return digest.NewDigest(digest.SHA256, s.sum) == d, nil
	}
	v := d.Verifier()
	if _, err := io.Copy(v, f); err != nil {
		return false, err
	}
	return v.Verified(), nil
}

func (h *Handler) uploadRangeError(q *request, s *session) {
	sessionHeaders(q, s)
	writeError(q.w, http.StatusRequestedRangeNotSatisfiable, codeBlobUploadInvalid, fmt.Sprintf("the chunk does not start at the upload's end (%d)", s.Size))
}

// finish verifies the session's bytes are digest dgst and commits them.
func (h *Handler) finish(q *request, s *session, dgst string) {
	d, ok := parseDigest(dgst)
	if !ok {
		writeError(q.w, http.StatusBadRequest, codeDigestInvalid, "invalid or missing digest "+dgst)
		return
	}
	f, err := os.Open(h.uploads.path(s.ID))
	if err != nil {
		serverError(q.w, err)
		return
	}
	defer f.Close()
	ok, err = verified(s, f, d)
	if err != nil {
		serverError(q.w, err)
		return
	}
	if !ok {
		h.uploads.close(s)
		writeError(q.w, http.StatusBadRequest, codeDigestInvalid, "the uploaded bytes are not "+d.String()+": the upload is dropped")
		return
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		serverError(q.w, err)
		return
	}
	if err := h.cfg.Store.PutBlob(q.r.Context(), q.repo, d, s.Size, f); err != nil {
		if errors.Is(err, ErrUnsupported) {
			h.uploads.close(s) // a refusal, as for a wrong digest
		}
		storeError(q.w, err)
		return
	}
	h.uploads.close(s)
	created(q, blobURL(q.repo, d.String()), d.String())
}
