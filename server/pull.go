package server

import (
	"net/http"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/server/api"
)

// pull is POST /v1/projects/{project}/pull: the spec admitted as an up's
// (no image name another tenant's), then its images pulled.
func (s *Server) pull(w http.ResponseWriter, r *http.Request, id identity) {
	project := r.PathValue("project")
	var req api.PullRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	p, err := validSpec(req.Spec, project)
	if err == nil {
		err = s.admit(r.Context(), id.tenant, p)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	markBuildable(p, req.Buildable)
	f := newFrames(w)
	err = s.e.Pull(progress.WithWriter(r.Context(), f), p, engine.PullOptions{Services: req.Services, IncludeDeps: req.IncludeDeps,
		IgnoreBuildable: req.IgnoreBuildable, IgnoreFailures: req.IgnoreFailures, Missing: req.Missing})
	f.finish(struct{}{}, err)
}
