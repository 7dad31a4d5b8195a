package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// build is POST /v1/projects/{project}/build: the images of the spec's
// services built where the backend keeps images, from files the client
// serves over the request's session (remoteFiles). The tenant may name
// only tags it may write and read only images it may see; a build's host
// power meets the server's policy. What it builds becomes the tenant's.
func (s *Server) build(w http.ResponseWriter, r *http.Request, id identity) {
	project := r.PathValue("project")
	var req api.BuildRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	p, err := s.admitBuild(r, id.tenant, project, req)
	if err != nil {
		writeError(w, err)
		return
	}
	sess, err := s.sessions.forRequest(r, id.tenant, project)
	if err == nil && sess == nil {
		err = fmt.Errorf("%w: a build reads the client's files over its session: send the request with one (%s)", errdefs.ErrFailedPrecondition, api.HeaderSession)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	f := newFrames(w)
	adm := &admission{ctx: r.Context(), tenant: id.tenant, p: p}
	ctx := context.WithValue(r.Context(), buildTenant{}, id.tenant)
	res, err := s.builder.Build(ctx, p, req.Services, builder.Options{
		NoCache: req.NoCache, Pull: req.Pull, Args: req.Args, Progress: "json", Out: &buildLines{f: f},
		Policy: s.hostPolicy, Files: newRemoteFiles(sess, req.BuildID), Tenant: id.tenant,
		CheckImage: func(_ context.Context, service, ref string) error {
			return s.checkImageRef(adm, "services."+service+".build: the Dockerfile reads", ref)
		},
	})
	out := api.BuildResult{Images: []api.BuiltImage{}}
	for _, b := range res {
		out.Images = append(out.Images, api.BuiltImage{Service: b.Service, Image: b.Image, ID: b.ID})
		if rerr := s.imageOwners.record(id.tenant, append([]string{b.Image}, p.Services[b.Service].Build.Tags...), []string{b.ID}); rerr != nil && err == nil {
			err = rerr
		}
	}
	f.finish(out, err)
}

// admitBuild reads the request's spec and refuses, before anything is
// built, what the tenant may not do: tags that are not its to write, an
// OCI layout context (a store of the server's), host power.
func (s *Server) admitBuild(r *http.Request, tenant, project string, req api.BuildRequest) (spec.Project, error) {
	p := req.Spec.Normalize()
	if p.Name != project {
		return p, fmt.Errorf("%w: the spec is project %q, the path says %q", errdefs.ErrInvalidArgument, p.Name, project)
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("%w: %v", errdefs.ErrInvalidArgument, err)
	}
	if req.BuildID == "" {
		return p, fmt.Errorf("%w: buildID: required (it names the build's file streams)", errdefs.ErrInvalidArgument)
	}
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "building images")
	if err != nil {
		return p, err
	}
	var tags []string
	for _, name := range p.ServiceNames() {
		a := p.Services[name]
		if a.Build == nil || (len(req.Services) > 0 && !slices.Contains(req.Services, name)) {
			continue
		}
		if err := builder.Check(s.hostPolicy, name, *a.Build); err != nil {
			return p, err
		}
		if local := builder.LocalCaches(*a.Build); len(local) > 0 {
			return p, fmt.Errorf("%w: services.%s.build: cache %q is a directory, which on a server would be the server's: use an inline or registry cache", errdefs.ErrPermissionDenied, name, local[0])
		}
		for k, v := range a.Build.AdditionalContexts {
			if strings.HasPrefix(v, "oci-layout://") {
				return p, fmt.Errorf("%w: services.%s.build.additional_contexts.%s: an OCI layout names a store of this server's: use docker-image:// or a directory", errdefs.ErrPermissionDenied, name, k)
			}
		}
		for _, tag := range append([]string{a.Image}, a.Build.Tags...) {
			if err := s.mayTag(r, tenant, imgs, tag, nil); err != nil {
				return p, fmt.Errorf("services.%s.build: %w", name, err)
			}
			if s.nodesPull() { // the result goes into the registry
				if err := s.mayStore(r.Context(), tenant, tag); err != nil {
					return p, fmt.Errorf("services.%s.build: %w", name, err)
				}
			}
			tags = append(tags, tag)
		}
	}
	// Claimed now, not when the build ends: another tenant admitted to
	// build one of these names meanwhile is refused.
	return p, s.imageOwners.claim(tenant, tags)
}

// buildLines carries the build's progress lines (BuildKit's JSON status,
// or a builder's text) to the client, a frame each.
type buildLines struct {
	f    *frames
	part []byte // a line not yet ended
}

func (b *buildLines) Write(p []byte) (int, error) {
	b.part = append(b.part, p...)
	for {
		i := bytes.IndexByte(b.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := bytes.TrimSpace(b.part[:i]); len(line) > 0 && json.Valid(line) {
			b.f.send(api.Frame{Build: json.RawMessage(slices.Clone(line))})
		}
		b.part = b.part[i+1:]
	}
}
