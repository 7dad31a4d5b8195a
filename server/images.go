package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// listImages is GET /v1/images.
func (s *Server) listImages(w http.ResponseWriter, r *http.Request, id identity) {
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "listing images")
	if err != nil {
		writeError(w, err)
		return
	}
	list, err := imgs.ListImages(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	if list == nil {
		list = []backends.Image{}
	}
	writeJSON(w, http.StatusOK, list)
}

// loadImage is POST /v1/images/load: a docker-archive or OCI layout tar
// into the backend's store (cornus image load --server; no registry
// needed). The body is bounded and must keep moving.
func (s *Server) loadImage(w http.ResponseWriter, r *http.Request, id identity) {
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "loading images")
	if err != nil {
		writeError(w, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, maxImageBody)
	rc := http.NewResponseController(w)
	// An upload gets a fresh read deadline whenever bytes arrive.
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadLimit))
	refs, err := imgs.LoadImage(r.Context(), &deadlineReader{r: body, bump: func() { _ = rc.SetReadDeadline(time.Now().Add(bodyReadLimit)) }})
	if err != nil {
		if _, ok := err.(*http.MaxBytesError); ok {
			err = fmt.Errorf("%w: image archives are limited to %d bytes", errdefs.ErrOutOfRange, int64(maxImageBody))
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, refs)
}

type deadlineReader struct {
	r    interface{ Read([]byte) (int, error) }
	bump func()
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		d.bump()
	}
	return n, err
}
