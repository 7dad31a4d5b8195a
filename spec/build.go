package spec

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Build says how an App's image is made (Compose build:, a devcontainer's
// build). Paths are absolute on the machine that holds the build context:
// the client's, even when the build runs on a server (the context is read
// from the client over the session, never from the server's disk).
type Build struct {
	// Context is the build context: a directory.
	Context string `yaml:"context" json:"context"`
	// Dockerfile is relative to Context, or absolute; "Dockerfile" when
	// empty. DockerfileInline, when set, is the Dockerfile's text instead.
	Dockerfile       string `yaml:"dockerfile,omitempty" json:"dockerfile,omitempty"`
	DockerfileInline string `yaml:"dockerfileInline,omitempty" json:"dockerfileInline,omitempty"`

	Args   map[string]string `yaml:"args,omitempty" json:"args,omitempty"`
	Target string            `yaml:"target,omitempty" json:"target,omitempty"`
	Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// Tags are more names for the built image, besides the App's Image.
	Tags []string `yaml:"tags,omitempty" json:"tags,omitempty"`

	Secrets []BuildSecret `yaml:"secrets,omitempty" json:"secrets,omitempty"`
	SSH     []BuildSSH    `yaml:"ssh,omitempty" json:"ssh,omitempty"`

	// CacheFrom and CacheTo are BuildKit cache entries in docker buildx's
	// CSV form (type=local,src=DIR; type=inline; a bare image reference).
	CacheFrom []string `yaml:"cacheFrom,omitempty" json:"cacheFrom,omitempty"`
	CacheTo   []string `yaml:"cacheTo,omitempty" json:"cacheTo,omitempty"`

	// AdditionalContexts are named contexts: an absolute directory,
	// service:NAME (another service's built image) or docker-image://REF.
	AdditionalContexts map[string]string `yaml:"additionalContexts,omitempty" json:"additionalContexts,omitempty"`

	// Network is the network RUN steps use: "" or "default", "none", or
	// "host" (host power: the build shares the host's network).
	Network    string              `yaml:"network,omitempty" json:"network,omitempty"`
	ExtraHosts map[string][]string `yaml:"extraHosts,omitempty" json:"extraHosts,omitempty"`
	ShmSize    Bytes               `yaml:"shmSize,omitempty" json:"shmSize,omitempty"`
	NoCache    bool                `yaml:"noCache,omitempty" json:"noCache,omitempty"`
	// Pull asks the builder to check for newer base images.
	Pull      bool     `yaml:"pull,omitempty" json:"pull,omitempty"`
	Platforms []string `yaml:"platforms,omitempty" json:"platforms,omitempty"`
	// Privileged and the entitlements network.host and security.insecure
	// are host power (RUN --security=insecure, RUN --network=host).
	Privileged   bool     `yaml:"privileged,omitempty" json:"privileged,omitempty"`
	Entitlements []string `yaml:"entitlements,omitempty" json:"entitlements,omitempty"`

	// Extend are stages built on top of the Dockerfile's target (or last)
	// stage, in order: a devcontainer's features and its user's UID
	// update, as the devcontainer CLI adds them. The image keeps the
	// target's user.
	Extend []BuildStage `yaml:"extend,omitempty" json:"extend,omitempty"`
}

// BuildStage is one stage a build adds on top of a Dockerfile.
type BuildStage struct {
	// Name says what the stage is, for progress and errors.
	Name string `yaml:"name" json:"name"`
	// Dir, when set, is a directory on the client the stage reads: its
	// files are at StageDir(i) in the build context.
	Dir string `yaml:"dir,omitempty" json:"dir,omitempty"`
	// Instructions are the stage's Dockerfile lines after its FROM line.
	Instructions string `yaml:"instructions" json:"instructions"`
}

// StagesRoot is the build context directory that holds the stages' Dirs;
// StageDir(i) is stage i's.
const StagesRoot = ".cornus-stages"

// StageDir is where the build context holds stage i's Dir.
func StageDir(i int) string { return fmt.Sprintf("%s/%d", StagesRoot, i) }

// BuildSecret is a build secret (RUN --mount=type=secret,id=ID): its
// content comes from a file or an environment variable on the client.
type BuildSecret struct {
	ID          string `yaml:"id" json:"id"`
	File        string `yaml:"file,omitempty" json:"file,omitempty"`
	Environment string `yaml:"environment,omitempty" json:"environment,omitempty"`

	// Value is Environment's value captured at load time; never serialized.
	Value *string `yaml:"-" json:"-"`
}

// BuildSSH is an ssh agent socket or key forwarded to RUN
// --mount=type=ssh,id=ID. No Paths means the client's own agent
// (SSH_AUTH_SOCK).
type BuildSSH struct {
	ID    string   `yaml:"id" json:"id"`
	Paths []string `yaml:"paths,omitempty" json:"paths,omitempty"`
}

// Build network modes.
const (
	BuildNetworkDefault = "default"
	BuildNetworkNone    = "none"
	BuildNetworkHost    = "host"
)

// Entitlements a build can ask for; both are host power.
const (
	EntitlementNetworkHost      = "network.host"
	EntitlementSecurityInsecure = "security.insecure"
)

// DockerfilePath is the Dockerfile's absolute path ("" for an inline one).
func (b Build) DockerfilePath() string {
	if b.DockerfileInline != "" {
		return ""
	}
	f := b.Dockerfile
	if f == "" {
		f = "Dockerfile"
	}
	if filepath.IsAbs(f) {
		return filepath.Clean(f)
	}
	return filepath.Join(b.Context, f)
}

// HostPower names what in b gives the build power over the host, "" when
// nothing does.
func (b Build) HostPower() string {
	switch {
	case b.Privileged:
		return "privileged"
	case b.Network == BuildNetworkHost:
		return "network: host"
	}
	for _, e := range b.Entitlements {
		if e == EntitlementNetworkHost || e == EntitlementSecurityInsecure {
			return "entitlement " + e
		}
	}
	return ""
}

func (b Build) validate(at string, ps *Problems) {
	switch {
	case b.Context == "":
		ps.add(at+".context", "required: the build context directory")
	case !filepath.IsAbs(b.Context) && !strings.Contains(b.Context, "://"):
		ps.add(at+".context", "%q is not an absolute path", b.Context)
	}
	if b.Dockerfile != "" && b.DockerfileInline != "" {
		ps.add(at+".dockerfileInline", "cannot be set with dockerfile: use one")
	}
	switch b.Network {
	case "", BuildNetworkDefault, BuildNetworkNone, BuildNetworkHost:
	default:
		ps.add(at+".network", "%q: use default, none or host", b.Network)
	}
	for _, e := range b.Entitlements {
		if e != EntitlementNetworkHost && e != EntitlementSecurityInsecure {
			ps.add(at+".entitlements", "%q: use %s or %s", e, EntitlementNetworkHost, EntitlementSecurityInsecure)
		}
	}
	ids := map[string]bool{}
	for i, s := range b.Secrets {
		sp := fmt.Sprintf("%s.secrets[%d]", at, i)
		switch {
		case s.ID == "":
			ps.add(sp+".id", "required")
		case ids[s.ID]:
			ps.add(sp+".id", "%q is given twice", s.ID)
		}
		ids[s.ID] = true
		if (s.File == "") == (s.Environment == "") {
			ps.add(sp, "set one of file or environment")
		}
	}
	for i, st := range b.Extend {
		sp := fmt.Sprintf("%s.extend[%d]", at, i)
		if st.Name == "" || strings.TrimSpace(st.Instructions) == "" {
			ps.add(sp, "a stage needs a name and instructions")
		}
		if st.Dir != "" && !filepath.IsAbs(st.Dir) {
			ps.add(sp+".dir", "%q is not an absolute path", st.Dir)
		}
	}
	for name, v := range b.AdditionalContexts {
		if name == "" || strings.ContainsAny(name, " \t,=") {
			ps.add(at+".additionalContexts", "%q is not a context name", name)
		}
		if !filepath.IsAbs(v) && !strings.HasPrefix(v, "service:") && !strings.Contains(v, "://") {
			ps.add(at+".additionalContexts."+name, "%q: use an absolute directory, service:NAME, docker-image://REF or a URL", v)
		}
	}
}
