package dockerapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

const pathStatHeader = "X-Docker-Container-Path-Stat"

func (s *Server) copier(w http.ResponseWriter) (backends.Copier, bool) {
	c, ok := s.b.(backends.Copier)
	if !ok {
		writeError(w, fmt.Errorf("copying files is not supported by the %s backend: %w", s.b.Name(), errdefs.ErrNotImplemented))
	}
	return c, ok
}

func setPathStat(w http.ResponseWriter, st backends.PathStat) error {
	b, err := json.Marshal(pathStat(st))
	if err != nil {
		return err
	}
	w.Header().Set(pathStatHeader, base64.StdEncoding.EncodeToString(b))
	return nil
}

// archivePath reads ?path=, which every archive endpoint requires.
func archivePath(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", invalidParam("path is required")
	}
	return p, nil
}

func (s *Server) archiveHead(w http.ResponseWriter, r *http.Request) {
	cp, ok := s.copier(w)
	if !ok {
		return
	}
	p, err := archivePath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	st, err := cp.StatPath(r.Context(), d.ID, p)
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
	cp, ok := s.copier(w)
	if !ok {
		return
	}
	p, err := archivePath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	rc, st, err := cp.CopyFrom(r.Context(), d.ID, p)
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
	cp, ok := s.copier(w)
	if !ok {
		return
	}
	p, err := archivePath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	if err := cp.CopyTo(r.Context(), d.ID, p, r.Body); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
