package server

import (
	"fmt"
	"net/http"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
)

// export is GET /v1/projects/{project}/export: a tar of a service
// container's filesystem (compose export).
func (s *Server) export(w http.ResponseWriter, r *http.Request, id identity) {
	o, err := serviceTarget(r)
	if err != nil {
		writeError(w, err)
		return
	}
	rc, err := s.e.Export(r.Context(), r.PathValue("project"), o)
	if err != nil {
		writeError(w, err)
		return
	}
	writeTar(w, rc)
}

// commit is POST /v1/projects/{project}/commit: an image of a service's
// container (compose commit). Its name is admitted as a load's names
// are (the tenant's own or a new one) and becomes the tenant's; an
// untagged image is the tenant's alone.
func (s *Server) commit(w http.ResponseWriter, r *http.Request, id identity) {
	var req api.CommitRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Service == "" {
		writeError(w, fmt.Errorf("%w: commit needs a service", errdefs.ErrInvalidArgument))
		return
	}
	if req.Index < 0 {
		writeError(w, fmt.Errorf("%w: index %d: want a replica number from 1", errdefs.ErrInvalidArgument, req.Index))
		return
	}
	if _, err := backends.Want[backends.Committer](s.b, backends.FeatureCommit, "commit"); err != nil {
		writeError(w, err)
		return
	}
	var names []string
	if req.Reference != "" {
		imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "commit")
		if err == nil {
			err = s.mayTag(r, id.tenant, imgs, req.Reference, nil)
		}
		if err == nil {
			err = s.imageOwners.claim(id.tenant, []string{req.Reference})
		}
		if err != nil {
			writeError(w, err)
			return
		}
		names = []string{req.Reference}
	}
	imageID, err := s.e.Commit(r.Context(), r.PathValue("project"), engine.CopyOptions{Service: req.Service, Index: req.Index},
		backends.CommitOptions{Reference: req.Reference, Author: req.Author, Message: req.Message, Changes: req.Changes, NoPause: req.NoPause})
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.imageOwners.record(id.tenant, names, []string{imageID}); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.CommitResult{ID: imageID})
}
