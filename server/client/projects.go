package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/reference"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// Projects runs the project verbs on the server: the same methods, with
// the same options, as the local engine.
type Projects struct {
	*Client
	// Session, when set, ties the deployments Up makes to that session.
	Session string
	// CaretakerToken is set by Up: the deployment's caretaker token.
	CaretakerToken string
	// LocalMounts go with Up: the client-local mounts the session's
	// client serves (Exports.Wire).
	LocalMounts []api.LocalMount
	// AgentSession goes with Exec: a session of this client serving its
	// ssh-agent (Session.ForwardAgent), for exec --forward-agent.
	AgentSession string
	// Environ is where secrets and configs taken from the environment
	// are looked up (nil: this process's): every spec goes to the server
	// with its files' and variables' content inline, read here.
	Environ []string
}

// inline is sp with its secrets' and configs' content read here.
func (p *Projects) inline(sp spec.Project) (spec.Project, error) {
	lookup := os.LookupEnv
	if p.Environ != nil {
		lookup = func(k string) (string, bool) {
			for i := len(p.Environ) - 1; i >= 0; i-- {
				if v, ok := strings.CutPrefix(p.Environ[i], k+"="); ok {
					return v, true
				}
			}
			return "", false
		}
	}
	return engine.InlineFiles(sp, lookup)
}

// inlineOpt is inline for a verb's optional spec.
func (p *Projects) inlineOpt(sp *spec.Project) (*spec.Project, error) {
	if sp == nil {
		return nil, nil
	}
	out, err := p.inline(*sp)
	return &out, err
}

func projectPath(project, verb string) string {
	return api.Version + "/projects/" + url.PathEscape(project) + "/" + verb
}

// Up applies p on the server.
func (p *Projects) Up(ctx context.Context, sp spec.Project, o engine.UpOptions) (engine.UpResult, error) {
	hdr := http.Header{}
	if p.Session != "" {
		hdr.Set(api.HeaderSession, p.Session)
	}
	sp, err := p.inline(sp)
	if err != nil {
		return engine.UpResult{}, err
	}
	var res api.UpResult
	h, err := p.stream(ctx, projectPath(sp.Name, "up"), hdr, api.UpRequest{Spec: sp, Services: o.Services, NoDeps: o.NoDeps,
		ForceRecreate: o.ForceRecreate, NoRecreate: o.NoRecreate, AlwaysRecreateDeps: o.AlwaysRecreateDeps, NoStart: o.NoStart,
		RenewAnonVolumes: o.RenewAnonVolumes, Wait: o.Wait, RemoveOrphans: o.RemoveOrphans, LocalMounts: p.LocalMounts}, &res)
	if h != nil {
		p.CaretakerToken = h.Get(api.HeaderCaretakerToken)
	}
	return engine.UpResult{Orphans: res.Orphans}, err
}

// Down removes a project on the server.
func (p *Projects) Down(ctx context.Context, project string, o engine.DownOptions) error {
	var err error
	if o.Spec, err = p.inlineOpt(o.Spec); err != nil {
		return err
	}
	_, err = p.stream(ctx, projectPath(project, "down"), nil,
		api.DownRequest{Spec: o.Spec, Volumes: o.Volumes, RemoveOrphans: o.RemoveOrphans, Timeout: o.Timeout}, nil)
	return err
}

// PS lists a project's containers.
func (p *Projects) PS(ctx context.Context, project string, o engine.PSOptions) ([]backends.Container, error) {
	q := url.Values{"service": o.Services}
	if o.All {
		q.Set("all", "1")
	}
	var cs []backends.Container
	err := p.call(ctx, http.MethodGet, projectPath(project, "ps"), q, nil, &cs)
	return cs, err
}

// Logs streams a project's logs to o.Out.
func (p *Projects) Logs(ctx context.Context, project string, o engine.LogsOptions) error {
	q := url.Values{"service": o.Services, "tail": {strconv.Itoa(o.Tail)}}
	setFlag(q, "follow", o.Follow)
	setFlag(q, "timestamps", o.Timestamps)
	setFlag(q, "noPrefix", o.NoPrefix)
	setFlag(q, "color", o.Color)
	setTime(q, "since", o.Since)
	setTime(q, "until", o.Until)
	if o.Index > 0 {
		q.Set("index", strconv.Itoa(o.Index))
	}
	return p.copyStream(ctx, projectPath(project, "logs"), q, o.Out)
}

// Attach streams the output of a project's running containers.
func (p *Projects) Attach(ctx context.Context, project string, o engine.AttachOptions) error {
	q := url.Values{"service": o.Services}
	setFlag(q, "color", o.Color)
	setFlag(q, "timestamps", o.Timestamps)
	setFlag(q, "noprefix", o.NoPrefix)
	return p.copyStream(ctx, projectPath(project, "attach"), q, o.Out)
}

func (p *Projects) copyStream(ctx context.Context, path string, q url.Values, out io.Writer) error {
	resp, err := p.do(ctx, http.MethodGet, path, q, nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(out, resp.Body)
	if ctx.Err() != nil {
		return nil // interrupted, as a local follow is
	}
	return err
}

func setFlag(q url.Values, k string, v bool) {
	if v {
		q.Set(k, "1")
	}
}

func setTime(q url.Values, k string, t time.Time) {
	if !t.IsZero() {
		q.Set(k, t.Format(time.RFC3339Nano))
	}
}

func (p *Projects) lifecycle(ctx context.Context, project, verb string, o engine.LifecycleOptions, out any) error {
	var err error
	if o.Spec, err = p.inlineOpt(o.Spec); err != nil {
		return err
	}
	_, err = p.stream(ctx, projectPath(project, verb), nil, api.LifecycleRequest{Services: o.Services, Timeout: o.Timeout,
		Signal: o.Signal, Spec: o.Spec, Volumes: o.Volumes, Stopped: o.Stopped}, out)
	return err
}

// Start starts a project's stopped containers.
func (p *Projects) Start(ctx context.Context, project string, o engine.LifecycleOptions) error {
	return p.lifecycle(ctx, project, "start", o, nil)
}

// Stop stops a project's containers.
func (p *Projects) Stop(ctx context.Context, project string, o engine.LifecycleOptions) error {
	return p.lifecycle(ctx, project, "stop", o, nil)
}

// Restart restarts a project's containers.
func (p *Projects) Restart(ctx context.Context, project string, o engine.LifecycleOptions) error {
	return p.lifecycle(ctx, project, "restart", o, nil)
}

// Projects lists the caller's projects on the server (compose ls); with
// all false, those with a running container.
func (p *Projects) Projects(ctx context.Context, all bool) ([]engine.ProjectStatus, error) {
	ps, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []engine.ProjectStatus{}
	for _, pr := range ps {
		if pr.Containers == 0 {
			continue // claimed, with nothing in it (volumes at most)
		}
		st := engine.ProjectStatus{Name: pr.Name, States: pr.States, ConfigFiles: pr.ConfigFiles}
		if st.States == nil {
			st.States = map[string]int{}
		}
		if all || st.Running() {
			out = append(out, st)
		}
	}
	return out, nil
}

// WaitExit waits on the server for the first exit of the services'
// containers and returns its code.
func (p *Projects) WaitExit(ctx context.Context, project string, services []string) (int, error) {
	var res api.WaitResult
	_, err := p.stream(ctx, projectPath(project, "wait"), nil, api.WaitRequest{Services: services}, &res)
	if err != nil {
		return -1, err
	}
	return res.ExitCode, nil
}

// Pause pauses a project's running containers.
func (p *Projects) Pause(ctx context.Context, project string, o engine.LifecycleOptions) error {
	return p.lifecycle(ctx, project, "pause", o, nil)
}

// Unpause unpauses a project's paused containers.
func (p *Projects) Unpause(ctx context.Context, project string, o engine.LifecycleOptions) error {
	return p.lifecycle(ctx, project, "unpause", o, nil)
}

// Kill signals a project's containers.
func (p *Projects) Kill(ctx context.Context, project string, o engine.LifecycleOptions) error {
	return p.lifecycle(ctx, project, "kill", o, nil)
}

// Remove removes a project's stopped containers.
func (p *Projects) Remove(ctx context.Context, project string, o engine.LifecycleOptions) ([]backends.Container, error) {
	var r api.Removed
	err := p.lifecycle(ctx, project, "rm", o, &r)
	return r.Containers, err
}

// Port is the host address a service's port is published on (on the
// server's host).
func (p *Projects) Port(ctx context.Context, project, service string, port int, proto string, index int) (string, error) {
	var a api.PortAnswer
	q := url.Values{"service": {service}, "port": {strconv.Itoa(port)}, "proto": {proto}, "index": {strconv.Itoa(index)}}
	err := p.call(ctx, http.MethodGet, projectPath(project, "port"), q, nil, &a)
	return a.Address, err
}

// Top lists the processes of a project's containers.
func (p *Projects) Top(ctx context.Context, project string, services []string) (map[string]backends.Processes, error) {
	var out map[string]backends.Processes
	err := p.call(ctx, http.MethodGet, projectPath(project, "top"), url.Values{"service": services}, nil, &out)
	return out, err
}

// Stats samples the resource usage of a project's containers.
func (p *Projects) Stats(ctx context.Context, project string, services []string, all bool) ([]engine.StatsSample, error) {
	q := url.Values{"service": services}
	if all {
		q.Set("all", "1")
	}
	var out []engine.StatsSample
	err := p.call(ctx, http.MethodGet, projectPath(project, "stats"), q, nil, &out)
	return out, err
}

// Images lists the images a project's containers use.
func (p *Projects) Images(ctx context.Context, project string, services []string) ([]engine.ImageUse, error) {
	var uses []api.ImageUse
	if err := p.call(ctx, http.MethodGet, projectPath(project, "images"), url.Values{"service": services}, nil, &uses); err != nil {
		return nil, err
	}
	out := make([]engine.ImageUse, 0, len(uses))
	for _, u := range uses {
		out = append(out, engine.ImageUse{Container: u.Container, Image: u.Image, Ref: u.Ref})
	}
	return out, nil
}

// Warnings asks the server which fields of sp its backend cannot honor.
func (p *Projects) Warnings(sp spec.Project) []spec.Warning {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ws []spec.Warning
	// Content does not change what can be honored: none is sent.
	if err := p.call(ctx, http.MethodPost, api.Version+"/warnings", nil, withoutContent(sp), &ws); err != nil {
		return []spec.Warning{{Message: fmt.Sprintf("the server could not check the spec: %v", err)}}
	}
	return ws
}

// List lists the tenant's projects on the server.
func (c *Client) List(ctx context.Context) ([]api.Project, error) {
	var ps []api.Project
	err := c.call(ctx, http.MethodGet, api.Version+"/projects", nil, nil, &ps)
	return ps, err
}

// withoutContent is sp with its secrets' and configs' sources blanked.
func withoutContent(sp spec.Project) spec.Project {
	out := sp
	out.Services = maps.Clone(sp.Services)
	for name, a := range out.Services {
		for _, fms := range []*[]spec.FileMount{&a.Secrets, &a.Configs} {
			c := append([]spec.FileMount(nil), *fms...)
			for i := range c {
				c[i].File, c[i].Environment, c[i].Content, c[i].Value = "", "", "", nil
			}
			*fms = c
		}
		out.Services[name] = a
	}
	return out
}

// Adopt gives project, which nobody deployed through the server, to
// tenant ("" for the caller's own; an operator token only) and returns
// the tenant that owns it now.
func (c *Client) Adopt(ctx context.Context, project, tenant string) (string, error) {
	var res api.AdoptRequest
	err := c.call(ctx, http.MethodPost, projectPath(project, "adopt"), nil, api.AdoptRequest{Tenant: tenant}, &res)
	return res.Tenant, err
}

func copyQuery(o engine.CopyOptions, path string) url.Values {
	q := url.Values{"service": {o.Service}, "path": {path}}
	if o.Index > 0 {
		q.Set("index", strconv.Itoa(o.Index))
	}
	return q
}

// CopyFrom returns a tar of path in a service's container on the server.
func (p *Projects) CopyFrom(ctx context.Context, project string, o engine.CopyOptions, path string) (io.ReadCloser, backends.PathStat, error) {
	resp, err := p.do(ctx, http.MethodGet, projectPath(project, "archive"), copyQuery(o, path), nil, nil)
	if err != nil {
		return nil, backends.PathStat{}, err
	}
	var st api.PathStat
	raw, err := base64.StdEncoding.DecodeString(resp.Header.Get(api.HeaderPathStat))
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err != nil {
		resp.Body.Close()
		return nil, backends.PathStat{}, fmt.Errorf("copy %s: the server's stat header: %w", path, err)
	}
	return resp.Body, fromPathStat(st), nil
}

// StatPath stats path in a service's container on the server.
func (p *Projects) StatPath(ctx context.Context, project string, o engine.CopyOptions, path string) (backends.PathStat, error) {
	q := copyQuery(o, path)
	q.Set("stat", "1")
	var st api.PathStat
	if err := p.call(ctx, http.MethodGet, projectPath(project, "archive"), q, nil, &st); err != nil {
		return backends.PathStat{}, err
	}
	return fromPathStat(st), nil
}

// CopyTo sends the tar open returns (once) for the server to extract
// into dir of the service's containers.
func (p *Projects) CopyTo(ctx context.Context, project string, o engine.CopyOptions, dir string, open func() (io.ReadCloser, error)) error {
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	resp, err := p.do(ctx, http.MethodPut, projectPath(project, "archive"), copyQuery(o, dir), rc, http.Header{"Content-Type": {"application/x-tar"}})
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func fromPathStat(st api.PathStat) backends.PathStat {
	return backends.PathStat{Name: st.Name, Size: st.Size, Mode: st.Mode, Mtime: st.Mtime, LinkTarget: st.LinkTarget}
}

// Volumes lists a project's volumes on the server.
func (p *Projects) Volumes(ctx context.Context, project string) ([]backends.Volume, error) {
	var vs []api.Volume
	if err := p.call(ctx, http.MethodGet, projectPath(project, "volumes"), nil, nil, &vs); err != nil {
		return nil, err
	}
	out := make([]backends.Volume, 0, len(vs))
	for _, v := range vs {
		out = append(out, backends.Volume{Name: v.Name, Driver: v.Driver, Mountpoint: v.Mountpoint, Labels: v.Labels, Created: v.Created})
	}
	return out, nil
}

// Pull pulls a project's images on the server. Only what a pull reads
// is sent: no mounts, files or build contexts of this machine.
func (p *Projects) Pull(ctx context.Context, sp spec.Project, o engine.PullOptions) error {
	reduced, buildable := imagesOnly(sp)
	req := api.PullRequest{Spec: reduced, Buildable: buildable, Services: o.Services,
		IncludeDeps: o.IncludeDeps, IgnoreBuildable: o.IgnoreBuildable, IgnoreFailures: o.IgnoreFailures, Missing: o.Missing}
	_, err := p.stream(ctx, projectPath(sp.Name, "pull"), nil, req, nil)
	return err
}

// imagesOnly is what a pull or push reads of sp: each service's image,
// platform and dependencies, and which services have a build section.
func imagesOnly(sp spec.Project) (reduced spec.Project, buildable []string) {
	reduced = spec.Project{Name: sp.Name, Services: map[string]spec.App{}}
	for _, n := range sp.ServiceNames() {
		a := sp.Services[n]
		reduced.Services[n] = spec.App{Name: n, Image: a.Image, Platform: a.Platform, DependsOn: a.DependsOn}
		if a.Build != nil {
			buildable = append(buildable, n)
		}
	}
	return reduced, buildable
}

// Push pushes a project's built images from the server's store. The
// logins of the registries they go to are looked up here (o.Auth) and
// sent with the request: the server pushes with those alone.
func (p *Projects) Push(ctx context.Context, sp spec.Project, o engine.PushOptions) error {
	reduced, buildable := imagesOnly(sp)
	req := api.PushRequest{Spec: reduced, Buildable: buildable, Services: o.Services, IncludeDeps: o.IncludeDeps, IgnoreFailures: o.IgnoreFailures}
	names, err := engine.Selected(sp, o.Services, !o.IncludeDeps)
	if err != nil {
		return err
	}
	hosts := map[string]bool{}
	for _, n := range names {
		a := sp.Services[n]
		named, err := reference.ParseNormalizedNamed(a.Image)
		if a.Build == nil || err != nil || o.Auth == nil || hosts[reference.Domain(named)] {
			continue
		}
		host := reference.Domain(named)
		hosts[host] = true
		login, err := o.Auth(ctx, host)
		if err != nil {
			return err
		}
		if login != (spec.RegistryAuth{Server: host}) {
			req.Logins = append(req.Logins, api.RegistryLogin{Host: host, Username: login.Username, Password: login.Password, IdentityToken: login.IdentityToken})
		}
	}
	_, err = p.stream(ctx, projectPath(sp.Name, "push"), nil, req, nil)
	return err
}

// Export returns a tar of a service container's filesystem on the
// server.
func (p *Projects) Export(ctx context.Context, project string, o engine.CopyOptions) (io.ReadCloser, error) {
	q := url.Values{"service": {o.Service}}
	if o.Index > 0 {
		q.Set("index", strconv.Itoa(o.Index))
	}
	resp, err := p.do(ctx, http.MethodGet, projectPath(project, "export"), q, nil, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Commit makes an image of a service's container on the server and
// returns its ID.
func (p *Projects) Commit(ctx context.Context, project string, o engine.CopyOptions, c backends.CommitOptions) (string, error) {
	req := api.CommitRequest{Service: o.Service, Index: o.Index, Reference: c.Reference, Author: c.Author,
		Message: c.Message, Changes: c.Changes, NoPause: c.NoPause}
	var res api.CommitResult
	if err := p.call(ctx, http.MethodPost, projectPath(project, "commit"), nil, req, &res); err != nil {
		return "", err
	}
	return res.ID, nil
}
