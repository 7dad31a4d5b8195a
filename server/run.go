package server

import (
	"context"
	"net/http"

	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
)

// run is GET /v1/projects/{project}/run: compose run's one-off container
// on a WebSocket (stdioConn) started by an api.RunStart. Its spec is
// admitted as an up's, and a first run claims the project as an up does.
func (s *Server) run(w http.ResponseWriter, r *http.Request, id identity) {
	var start api.RunStart
	sc, ok := acceptStdio(w, r, &start, "a run start")
	if !ok {
		return
	}
	defer sc.close()
	project := r.PathValue("project")
	p, err := validSpec(start.Spec, project)
	if err != nil {
		sc.finish(api.Control{}, err)
		return
	}
	epoch, err := s.owners.claim(id.tenant, project, func() (bool, error) { return present(sc.ctx, s.b, project) })
	if err != nil {
		sc.finish(api.Control{}, err)
		return
	}
	made := false
	defer func() {
		if !made { // a refused run leaves the name free, as a failed first up
			if left, err := present(context.WithoutCancel(sc.ctx), s.b, project); err == nil {
				_ = s.owners.release(project, left)
			}
		}
	}()
	if p, err = s.admitUp(sc.ctx, id.tenant, p, nil, nil); err != nil {
		sc.finish(api.Control{}, err)
		return
	}
	tok, err := s.tokens.mintCaretaker(grant{Tenant: id.tenant, Project: project, Epoch: epoch})
	if err != nil {
		sc.finish(api.Control{}, err)
		return
	}
	// Its caretaker asks for the project's egress policies while it runs.
	if err := s.policies.set(p); err != nil {
		sc.finish(api.Control{}, err)
		return
	}
	o := engine.RunOptions{Service: start.Service, Name: start.Name, NoDeps: start.NoDeps, Detach: start.Detach,
		Remove: start.Remove, UseAliases: start.UseAliases, Stdout: sc.out, Stderr: sc.err}
	o.Stdin, o.Resize = sc.feed(start.Stdin, start.TTY)
	res, err := s.e.Run(caretaker.WithToken(sc.ctx, tok), p, o)
	made = err == nil || res.ID != ""
	ctl := api.Control{Container: res.Name}
	if !start.Detach {
		ctl.ExitCode = &res.ExitCode
	}
	sc.finish(ctl, err)
}

// wait is POST /v1/projects/{project}/wait: compose wait, the first exit
// of the services' containers.
func (s *Server) wait(w http.ResponseWriter, r *http.Request, id identity) {
	var req api.WaitRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	f := newFrames(w)
	code, err := s.e.WaitExit(r.Context(), r.PathValue("project"), req.Services)
	f.finish(api.WaitResult{ExitCode: code}, err)
}

// attachStdio is GET /v1/projects/{project}/attach-stdio: compose attach,
// a replica's stdio on a WebSocket (stdioConn) started by an
// api.AttachStart, until it exits or the client leaves.
func (s *Server) attachStdio(w http.ResponseWriter, r *http.Request, id identity) {
	var start api.AttachStart
	sc, ok := acceptStdio(w, r, &start, "an attach start")
	if !ok {
		return
	}
	defer sc.close()
	o := engine.AttachServiceOptions{Service: start.Service, Index: start.Index, Stdout: sc.out, Stderr: sc.err}
	o.Stdin, o.Resize = sc.feed(start.Stdin, start.TTY)
	code, err := s.e.AttachService(sc.ctx, r.PathValue("project"), o)
	sc.finish(api.Control{ExitCode: &code}, err)
}
