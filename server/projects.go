package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// LabelTenant marks every container the server deployed with the name of
// the client token that deployed it: a project belongs to one tenant.
const LabelTenant = "dev.cornus.server.tenant"

// normalized is a received spec with what JSON does not carry (app
// names) restored.
func normalized(p *spec.Project) *spec.Project {
	if p == nil {
		return nil
	}
	n := p.Normalize()
	return &n
}

func validProject(p string) error {
	if p == "" || len(p) > 128 {
		return fmt.Errorf("%w: project name %q", errdefs.ErrInvalidArgument, p)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%w: project name %q: lowercase letters, digits, '-' and '_' only", errdefs.ErrInvalidArgument, p)
		}
	}
	return nil
}

func (s *Server) up(w http.ResponseWriter, r *http.Request, id identity) {
	project := r.PathValue("project")
	req, p, err := readUp(w, r, project)
	if err != nil {
		writeError(w, err)
		return
	}
	sess, err := s.sessions.forRequest(r, id.tenant, project)
	if err != nil {
		writeError(w, err)
		return
	}
	// A foreground up's client gone a moment ago: its deployment goes
	// first, not this up's containers with it.
	if err := s.sessions.awaitRemoval(r.Context(), project, nil); err != nil {
		writeError(w, err)
		return
	}
	// A session whose first up failed owns nothing and would only hold
	// its client (up -d's agent) and mounts: it ends.
	deployed := false
	defer func() {
		if !deployed && sess != nil {
			s.sessions.endIfIdle(sess)
		}
	}()
	// The project becomes the tenant's before anything is checked against
	// its own projects or created; a first up that leaves nothing behind
	// gives the name back.
	epoch, err := s.owners.claim(id.tenant, project, func() (bool, error) { return present(r.Context(), s.b, project) })
	if err != nil {
		writeError(w, err)
		return
	}
	defer func() {
		if !deployed {
			left, err := present(context.WithoutCancel(r.Context()), s.b, project)
			if err == nil {
				_ = s.owners.release(project, left)
			}
		}
	}()
	if p, err = s.admitUp(r.Context(), id.tenant, p, sess, req.LocalMounts); err != nil {
		writeError(w, err)
		return
	}
	// Its companions ask for their credentials (and serve docker) before
	// the app starts; the running ones keep theirs until the up succeeds.
	if err := s.addGrants(p); err != nil {
		writeError(w, err)
		return
	}
	tok, err := s.tokens.mintCaretaker(grant{Tenant: id.tenant, Project: project, Epoch: epoch})
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set(api.HeaderCaretakerToken, tok)
	if sess != nil {
		// Its companions open client-local mounts (and client egress)
		// through it before the up ends.
		done, err := s.sessions.deploy(r.Context(), project, sess)
		if err != nil {
			writeError(w, err)
			return
		}
		defer done()
	}
	f := newFrames(w)
	ctx := caretaker.WithToken(progress.WithWriter(r.Context(), f), tok)
	res, err := s.e.Up(ctx, p, engine.UpOptions{Services: req.Services, NoDeps: req.NoDeps, ForceRecreate: req.ForceRecreate,
		NoRecreate: req.NoRecreate, AlwaysRecreateDeps: req.AlwaysRecreateDeps, NoStart: req.NoStart,
		RenewAnonVolumes: req.RenewAnonVolumes, Wait: req.Wait, RemoveOrphans: req.RemoveOrphans})
	if err == nil {
		err = s.recordRelayed(p)
	}
	if err == nil && sess != nil {
		err = s.sessions.own(sess, project)
	}
	deployed = err == nil
	f.finish(api.UpResult{Orphans: res.Orphans}, err)
}

// readUp reads an up request whose spec is a valid project of the path's
// name.
func readUp(w http.ResponseWriter, r *http.Request, project string) (api.UpRequest, spec.Project, error) {
	var req api.UpRequest
	if err := decodeBody(w, r, &req); err != nil {
		return req, spec.Project{}, err
	}
	p, err := validSpec(req.Spec, project)
	return req, p, err
}

// validSpec is spec normalized, when it is a valid project of the path's
// name.
func validSpec(spec spec.Project, project string) (spec.Project, error) {
	p := spec.Normalize()
	if p.Name != project {
		return p, fmt.Errorf("%w: the spec is project %q, the path says %q", errdefs.ErrInvalidArgument, p.Name, project)
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("%w: %v", errdefs.ErrInvalidArgument, err)
	}
	return p, nil
}

// admitUp checks p against the host policy and the tenant's rights, and
// the session's client routes, then adds the client-local mounts and the
// tenant's label. The client's own binds meet this host's policy, which
// does not allow the directory of client-local mounts (another session's):
// only the server adds binds there, after the check.
func (s *Server) admitUp(ctx context.Context, tenant string, p spec.Project, sess *session, mounts []api.LocalMount) (spec.Project, error) {
	p, err := s.admit(ctx, tenant, p)
	if err != nil {
		return p, err
	}
	if err := s.checkClientRoutes(p, sess); err != nil {
		return p, err
	}
	if err := s.checkCredentials(p, sess); err != nil {
		return p, err
	}
	if err := s.checkDocker(p); err != nil {
		return p, err
	}
	p, err = s.registryImages(ctx, tenant, p)
	if err != nil {
		return p, err
	}
	if len(mounts) > 0 {
		if p, err = s.mountLocal(ctx, sess, p, mounts); err != nil {
			return p, err
		}
	}
	return withTenant(p, tenant), nil
}

// withTenant labels every app of p with the tenant deploying it (a copy).
func withTenant(p spec.Project, tenant string) spec.Project {
	out := p
	out.Services = maps.Clone(p.Services)
	for name, a := range out.Services {
		a.Labels = maps.Clone(a.Labels)
		if a.Labels == nil {
			a.Labels = map[string]string{}
		}
		a.Labels[LabelTenant] = tenant
		out.Services[name] = a
	}
	return out
}

// admitted is the spec a verb that creates nothing (down, start, stop,
// restart, kill, rm) received, restored (nil: none was sent). Such a
// verb takes the spec's order, stop settings and hooks only: the engine
// checks its hooks against the host policy (checkSpec).
func admitted(r *http.Request, p *spec.Project) (*spec.Project, error) {
	n := normalized(p)
	if n != nil && n.Name != r.PathValue("project") {
		return nil, fmt.Errorf("%w: the spec is project %q, the path says %q", errdefs.ErrInvalidArgument, n.Name, r.PathValue("project"))
	}
	return n, nil
}

func (s *Server) down(w http.ResponseWriter, r *http.Request, id identity) {
	project := r.PathValue("project")
	var req api.DownRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	sp, err := admitted(r, req.Spec)
	if err != nil {
		writeError(w, err)
		return
	}
	f := newFrames(w)
	ctx := progress.WithWriter(r.Context(), f)
	err = s.e.Down(ctx, project, engine.DownOptions{Spec: sp, Volumes: req.Volumes, RemoveOrphans: req.RemoveOrphans, Timeout: req.Timeout})
	if err == nil {
		s.tokens.forgetCaretaker(project)
		s.forgetRelayed(project)
		s.sessions.release(project)
		var left bool
		if left, err = present(ctx, s.b, project); err == nil {
			err = s.owners.ended(project, left)
		}
	}
	f.finish(struct{}{}, err)
}

func (s *Server) ps(w http.ResponseWriter, r *http.Request, id identity) {
	q := r.URL.Query()
	cs, err := s.e.PS(r.Context(), r.PathValue("project"), engine.PSOptions{Services: q["service"], All: q.Get("all") == "1"})
	if err != nil {
		writeError(w, err)
		return
	}
	if cs == nil {
		cs = []backends.Container{}
	}
	writeJSON(w, http.StatusOK, cs)
}

func (s *Server) logs(w http.ResponseWriter, r *http.Request, id identity) {
	q := r.URL.Query()
	o := engine.LogsOptions{Services: q["service"], Follow: q.Get("follow") == "1", Timestamps: q.Get("timestamps") == "1",
		NoPrefix: q.Get("noPrefix") == "1", Color: q.Get("color") == "1", Tail: -1}
	var err error
	if v := q.Get("tail"); v != "" {
		if o.Tail, err = strconv.Atoi(v); err != nil {
			writeError(w, fmt.Errorf("%w: tail %q", errdefs.ErrInvalidArgument, v))
			return
		}
	}
	if v := q.Get("index"); v != "" {
		if o.Index, err = strconv.Atoi(v); err != nil {
			writeError(w, fmt.Errorf("%w: index %q", errdefs.ErrInvalidArgument, v))
			return
		}
	}
	if o.Since, err = queryTime(q.Get("since")); err == nil {
		o.Until, err = queryTime(q.Get("until"))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	o.Out = newFlushWriter(w, "text/plain; charset=utf-8")
	// Headers are out: an error now can only end the stream.
	_ = s.e.Logs(r.Context(), r.PathValue("project"), o)
}

func queryTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, fmt.Errorf("%w: time %q: want RFC 3339", errdefs.ErrInvalidArgument, v)
	}
	return t, nil
}

func (s *Server) attach(w http.ResponseWriter, r *http.Request, id identity) {
	q := r.URL.Query()
	out := newFlushWriter(w, "text/plain; charset=utf-8")
	_ = s.e.Attach(r.Context(), r.PathValue("project"), engine.AttachOptions{Services: q["service"], Color: q.Get("color") == "1",
		Timestamps: q.Get("timestamps") == "1", NoPrefix: q.Get("noprefix") == "1", Out: out})
}

var lifecycleVerbs = []string{"start", "stop", "restart", "kill", "rm", "pause", "unpause"}

func (s *Server) lifecycle(w http.ResponseWriter, r *http.Request, id identity) {
	verb := r.PathValue("verb")
	if !slices.Contains(lifecycleVerbs, verb) {
		writeError(w, fmt.Errorf("%w: no such verb %q", errdefs.ErrNotFound, verb))
		return
	}
	var req api.LifecycleRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	project := r.PathValue("project")
	sp, err := admitted(r, req.Spec)
	if err != nil {
		writeError(w, err)
		return
	}
	o := engine.LifecycleOptions{Services: req.Services, Timeout: req.Timeout, Signal: req.Signal, Spec: sp, Volumes: req.Volumes, Stopped: req.Stopped}
	if verb == "start" || verb == "restart" {
		// A single file the client replaced since (an editor's save by
		// rename) is pinned again before the containers bind it.
		s.sessions.refreshPins(project)
	}
	f := newFrames(w)
	ctx := progress.WithWriter(r.Context(), f)
	var result any = struct{}{}
	switch verb {
	case "start":
		err = s.e.Start(ctx, project, o)
	case "stop":
		err = s.e.Stop(ctx, project, o)
	case "restart":
		err = s.e.Restart(ctx, project, o)
	case "kill":
		err = s.e.Kill(ctx, project, o)
	case "pause":
		err = s.e.Pause(ctx, project, o)
	case "unpause":
		err = s.e.Unpause(ctx, project, o)
	case "rm":
		var cs []backends.Container
		cs, err = s.e.Remove(ctx, project, o)
		result = api.Removed{Containers: cs}
	}
	f.finish(result, err)
}

func (s *Server) port(w http.ResponseWriter, r *http.Request, id identity) {
	q := r.URL.Query()
	port, err := strconv.Atoi(q.Get("port"))
	if err != nil {
		writeError(w, fmt.Errorf("%w: port %q", errdefs.ErrInvalidArgument, q.Get("port")))
		return
	}
	index, _ := strconv.Atoi(q.Get("index"))
	addr, err := s.e.Port(r.Context(), r.PathValue("project"), q.Get("service"), port, q.Get("proto"), index)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.PortAnswer{Address: addr})
}

func (s *Server) top(w http.ResponseWriter, r *http.Request, id identity) {
	tops, err := s.e.Top(r.Context(), r.PathValue("project"), r.URL.Query()["service"])
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tops)
}

// stats is GET /v1/projects/{project}/stats[?service=S...&all=1]: one
// sample of the containers' resource usage (compose stats polls it).
func (s *Server) stats(w http.ResponseWriter, r *http.Request, id identity) {
	q := r.URL.Query()
	samples, err := s.e.Stats(r.Context(), r.PathValue("project"), q["service"], q.Get("all") == "1")
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, samples)
}

func (s *Server) volumes(w http.ResponseWriter, r *http.Request, id identity) {
	vs, err := s.e.Volumes(r.Context(), r.PathValue("project"))
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]api.Volume, 0, len(vs))
	for _, v := range vs {
		out = append(out, api.Volume{Name: v.Name, Driver: v.Driver, Mountpoint: v.Mountpoint, Labels: v.Labels, Created: v.Created})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) images(w http.ResponseWriter, r *http.Request, id identity) {
	uses, err := s.e.Images(r.Context(), r.PathValue("project"), r.URL.Query()["service"])
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]api.ImageUse, 0, len(uses))
	for _, u := range uses {
		out = append(out, api.ImageUse{Container: u.Container, Image: u.Image, Ref: u.Ref})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) warnings(w http.ResponseWriter, r *http.Request, id identity) {
	var p spec.Project
	if err := decodeBody(w, r, &p); err != nil {
		writeError(w, err)
		return
	}
	// Nothing is applied: the spec is only read for what the backend
	// cannot honor.
	ws := s.e.Warnings(p)
	if s.nodesPull() { // the server builds, into the registry the nodes pull from
		ws = slices.DeleteFunc(ws, func(w spec.Warning) bool { return w.Field == "build" })
	}
	if ws == nil {
		ws = []spec.Warning{}
	}
	writeJSON(w, http.StatusOK, ws)
}

// listProjects lists the tenant's projects: those it owns (owners.go).
func (s *Server) listProjects(w http.ResponseWriter, r *http.Request, id identity) {
	out := []api.Project{}
	for _, name := range s.owners.of(id.tenant) {
		cs, err := s.b.List(r.Context(), backends.ListOptions{Labels: map[string]string{backends.ComposeProject: name}, All: true})
		if err != nil {
			writeError(w, err)
			return
		}
		pr := api.Project{Name: name, Containers: len(cs), States: map[string]int{}}
		for _, c := range cs {
			if c.Running() {
				pr.Running++
			}
		}
		for _, st := range engine.ProjectsOf(cs, true) {
			pr.States, pr.ConfigFiles = st.States, st.ConfigFiles
		}
		pr.Session, pr.Detached = s.sessions.of(name)
		out = append(out, pr)
	}
	writeJSON(w, http.StatusOK, out)
}

// adopt is POST /v1/projects/{project}/adopt (operator tokens only): a
// project nobody deployed through this server becomes a tenant's.
func (s *Server) adopt(w http.ResponseWriter, r *http.Request, id identity) {
	if id.role != RoleOperator {
		writeError(w, fmt.Errorf("%w: adopting a project takes an operator token (cornus token create --operator NAME)", errdefs.ErrPermissionDenied))
		return
	}
	var req api.AdoptRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	tenant := req.Tenant
	if tenant == "" {
		tenant = id.tenant
	}
	if !validName(tenant) {
		writeError(w, fmt.Errorf("%w: tenant %q", errdefs.ErrInvalidArgument, tenant))
		return
	}
	project := r.PathValue("project")
	if exists, err := present(r.Context(), s.b, project); err != nil || !exists {
		writeError(w, cmpErr(err, fmt.Errorf("%w: no project %s on this server's backend", errdefs.ErrNotFound, project)))
		return
	}
	if err := s.owners.adopt(tenant, project); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.AdoptRequest{Tenant: tenant})
}

// cmpErr is err, else fallback.
func cmpErr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}
