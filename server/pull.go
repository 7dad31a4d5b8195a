package server

import (
	"net/http"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// pull is POST /v1/projects/{project}/pull: the spec admitted as an up's
// (no image name another tenant's), then its images pulled.
func (s *Server) pull(w http.ResponseWriter, r *http.Request, id identity) {
	var req api.PullRequest
	p, ok := s.imagesSpec(w, r, id, &req, func() (spec.Project, []string) { return req.Spec, req.Buildable })
	if !ok {
		return
	}
	f := newFrames(w)
	err := s.e.Pull(progress.WithWriter(r.Context(), f), p, engine.PullOptions{Services: req.Services, IncludeDeps: req.IncludeDeps,
		IgnoreBuildable: req.IgnoreBuildable, IgnoreFailures: req.IgnoreFailures, Missing: req.Missing})
	f.finish(struct{}{}, err)
}

// imagesSpec decodes a pull's or push's request into req and returns
// its spec (of), valid for the route's project and admitted as an up's,
// with the services the client said have a build section marked so; on
// failure it has answered the error.
func (s *Server) imagesSpec(w http.ResponseWriter, r *http.Request, id identity, req any, of func() (spec.Project, []string)) (spec.Project, bool) {
	if err := decodeBody(w, r, req); err != nil {
		writeError(w, err)
		return spec.Project{}, false
	}
	sp, buildable := of()
	p, err := validSpec(sp, r.PathValue("project"))
	if err == nil {
		_, err = s.admit(r.Context(), id.tenant, p)
	}
	if err != nil {
		writeError(w, err)
		return spec.Project{}, false
	}
	for _, n := range buildable {
		if a, ok := p.Services[n]; ok {
			a.Build = &spec.Build{} // only read as "buildable"
			p.Services[n] = a
		}
	}
	return p, true
}
