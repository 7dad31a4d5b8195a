package server

import (
	"context"
	"net/http"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// push is POST /v1/projects/{project}/push: the spec admitted as an up's
// (no image another tenant's, none of cornus's own), then its built
// images pushed with the logins the client sent and no other: a tenant
// never pushes with a login of the server's host.
func (s *Server) push(w http.ResponseWriter, r *http.Request, id identity) {
	var req api.PushRequest
	p, ok := s.imagesSpec(w, r, id, &req, func() (spec.Project, []string) { return req.Spec, req.Buildable })
	if !ok {
		return
	}
	logins := map[string]spec.RegistryAuth{}
	for _, l := range req.Logins {
		logins[l.Host] = spec.RegistryAuth{Server: l.Host, Username: l.Username, Password: l.Password, IdentityToken: l.IdentityToken}
	}
	f := newFrames(w)
	err := s.e.Push(progress.WithWriter(r.Context(), f), p, engine.PushOptions{Services: req.Services, IncludeDeps: req.IncludeDeps,
		IgnoreFailures: req.IgnoreFailures, Auth: func(_ context.Context, host string) (spec.RegistryAuth, error) {
			return logins[host], nil
		}})
	f.finish(struct{}{}, err)
}
