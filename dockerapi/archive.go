package dockerapi

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"

	"github.com/cornus-dev/cornus/backends"
)

const pathStatHeader = "X-Docker-Container-Path-Stat"

// archiveTarget resolves what every archive endpoint needs — the backend's
// Copier, ?path= and the container — answering the error itself if any
// is missing.
func (s *Server) archiveTarget(w http.ResponseWriter, r *http.Request) (backends.Copier, string, string, bool) {
	c, ok := want[backends.Copier](s, w, backends.FeatureCopy, "copying files")
	if !ok {
		return nil, "", "", false
	}
	p := r.URL.Query().Get("path")
	if p == "" {
		writeError(w, invalidParam("path is required"))
		return nil, "", "", false
	}
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return nil, "", "", false
	}
	return c, p, d.ID, true
}

func setPathStat(w http.ResponseWriter, st backends.PathStat) error {
	b, err := json.Marshal(pathStat(st))
	if err != nil {
		return err
	}
	w.Header().Set(pathStatHeader, base64.StdEncoding.EncodeToString(b))
	return nil
}

func (s *Server) archiveHead(w http.ResponseWriter, r *http.Request) {
	cp, p, id, ok := s.archiveTarget(w, r)
	if !ok {
		return
	}
	st, err := cp.StatPath(r.Context(), id, p)
	if err == nil {
		err = setPathStat(w, st)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) archiveGet(w http.ResponseWriter, r *http.Request) {
	cp, p, id, ok := s.archiveTarget(w, r)
	if !ok {
		return
	}
	rc, st, err := cp.CopyFrom(r.Context(), id, p)
	if err != nil {
		writeError(w, err)
		return
	}
	defer rc.Close()
	if err := setPathStat(w, st); err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, rc)
}

func (s *Server) archivePut(w http.ResponseWriter, r *http.Request) {
	cp, p, id, ok := s.archiveTarget(w, r)
	if !ok {
		return
	}
	if err := cp.CopyTo(r.Context(), id, p, r.Body); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
