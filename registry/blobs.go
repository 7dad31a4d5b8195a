package registry

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// blobs serves GET, HEAD and DELETE of /v2/NAME/blobs/DIGEST.
func (h *Handler) blobs(q *request, arg string) {
	d, ok := parseDigest(arg)
	if !ok {
		writeError(q.w, http.StatusBadRequest, codeDigestInvalid, "invalid digest "+arg)
		return
	}
	switch q.r.Method {
	case http.MethodGet, http.MethodHead:
		if !h.authorize(q, Pull) {
			return
		}
		f, err := h.cfg.Store.OpenBlob(q.r.Context(), q.repo, d)
		if failed(q.w, err, codeBlobUnknown, "blob "+d.String()+" not found in "+q.repo) {
			return
		}
		defer f.Close()
		hdr := q.w.Header()
		hdr.Set("Docker-Content-Digest", d.String())
		hdr.Set("Content-Type", "application/octet-stream")
		hdr.Set("ETag", `"`+d.String()+`"`)
		// ServeContent answers ranges (206) and HEAD with the length.
		http.ServeContent(q.w, q.r, "", time.Time{}, f)
	case http.MethodDelete:
		if !h.authorize(q, Delete) {
			return
		}
		err := h.cfg.Store.DeleteBlob(q.r.Context(), q.repo, d)
		if failed(q.w, err, codeBlobUnknown, "blob "+d.String()+" not found in "+q.repo) {
			return
		}
		q.w.Header().Set("Content-Length", "0")
		q.w.WriteHeader(http.StatusAccepted)
	default:
		methodNotAllowed(q.w)
	}
}

// failed answers a store's error, false for none: ErrNotFound is 404
// with code and msg, anything else a server error.
func failed(w http.ResponseWriter, err error, code, msg string) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, code, msg)
	default:
		serverError(w, err)
	}
	return true
}

func methodNotAllowed(w http.ResponseWriter) {
	writeError(w, http.StatusMethodNotAllowed, codeUnsupported, "method not allowed")
}

// created answers 201 for a blob now in the repository.
func created(q *request, loc, dgst string) {
	q.w.Header().Set("Location", loc)
	q.w.Header().Set("Docker-Content-Digest", dgst)
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusCreated)
}

func blobURL(repo, d string) string { return "/v2/" + repo + "/blobs/" + d }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
