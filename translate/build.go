package translate

import (
	"fmt"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// build carries a service's build: section into the spec and names the
// image it makes (docker compose's <project>-<service> when image: is
// unset). pull_policy: build builds on every up, as docker compose does.
func (t *translator) build(s types.ServiceConfig, a *spec.App) {
	if s.Build == nil {
		if s.PullPolicy == types.PullPolicyBuild {
			t.warn(s.Name, "pull_policy", "build needs a build section; the image is used if present")
			a.PullPolicy = spec.PullMissing
		}
		return
	}
	if a.Image == "" {
		a.Image = t.project.Name + "-" + s.Name // docker compose's default
	}
	b := s.Build
	out := &spec.Build{
		Context:            b.Context,
		Dockerfile:         b.Dockerfile,
		DockerfileInline:   b.DockerfileInline,
		Args:               environment(b.Args),
		Target:             b.Target,
		Labels:             nonEmptyMap(b.Labels),
		Tags:               b.Tags,
		CacheFrom:          b.CacheFrom,
		CacheTo:            b.CacheTo,
		AdditionalContexts: nonEmptyMap(b.AdditionalContexts),
		Network:            b.Network,
		ExtraHosts:         hosts(b.ExtraHosts),
		ShmSize:            spec.Bytes(b.ShmSize),
		NoCache:            b.NoCache,
		Pull:               b.Pull,
		Platforms:          b.Platforms,
		Privileged:         b.Privileged,
		Entitlements:       b.Entitlements,
	}
	if out.DockerfileInline != "" {
		out.Dockerfile = "" // compose-go fills the default name in
	}
	for _, k := range b.SSH {
		ssh := spec.BuildSSH{ID: k.ID}
		if k.Path != "" {
			ssh.Paths = []string{k.Path}
		}
		out.SSH = append(out.SSH, ssh)
	}
	out.Secrets = t.buildSecrets(s.Name, b.Secrets)
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"isolation", b.Isolation != ""},
		{"ulimits", len(b.Ulimits) > 0},
		{"no_cache_filter", len(b.NoCacheFilter) > 0},
		{"provenance", b.Provenance != ""},
		{"sbom", b.SBOM != ""},
	} {
		if f.set {
			t.warn(s.Name, "build."+f.name, "not supported by cornus builds; ignored")
		}
	}
	a.Build = out
}

// buildSecrets resolves build secrets against the project's secrets: a
// file or an environment variable, read on the client at build time.
func (t *translator) buildSecrets(service string, refs []types.ServiceSecretConfig) []spec.BuildSecret {
	var out []spec.BuildSecret
	for i, r := range refs {
		at := fmt.Sprintf("build.secrets[%d]", i)
		def := t.project.Secrets[r.Source]
		id := r.Source
		if r.Target != "" {
			id = r.Target // docker compose: the target names the secret's id
		}
		bs := spec.BuildSecret{ID: id}
		switch {
		case bool(def.External):
			t.warn(service, at, "external secret %q (a swarm object) is not supported; ignored", r.Source)
			continue
		case def.Environment != "":
			bs.Environment = def.Environment
			value := def.Content
			bs.Value = &value
		case def.File != "":
			bs.File = def.File
		default:
			t.warn(service, at, "secret %q has neither file nor environment; ignored", r.Source)
			continue
		}
		if r.UID != "" || r.GID != "" || r.Mode != nil || strings.Contains(r.Target, "/") {
			t.warn(service, at, "uid, gid, mode and a target path do not apply to build secrets (RUN --mount=type=secret sets them); ignored")
		}
		out = append(out, bs)
	}
	return out
}

// devcontainerStages puts what a devcontainer adds to its image (local
// features, the UID update) on top of the service's build; a service that
// only names an image gets a build FROM it, named as docker compose names
// built images.
func (t *translator) devcontainerStages(service string, d *compose.DevcontainerInfo, a *spec.App) {
	if len(d.BuildStages) == 0 {
		return
	}
	if a.Build == nil {
		a.Build = &spec.Build{Context: d.BuildDir, DockerfileInline: "FROM " + a.Image + "\n"}
		a.Image = t.project.Name + "-" + service
	}
	a.Build.Extend = append(a.Build.Extend, spec.DeepCopy(d.BuildStages)...)
}
