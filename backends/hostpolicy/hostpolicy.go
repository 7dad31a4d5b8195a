// Package hostpolicy is cornus's default-deny policy for what a deployed
// app may take from the host: privileged mode and host bind mounts are
// refused unless CORNUS_ALLOW_PRIVILEGED / CORNUS_ALLOW_BIND_SOURCES allow
// them. Every backend's callers check it before creating anything.
package hostpolicy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// Environment variables that relax the policy.
const (
	EnvAllowPrivileged  = "CORNUS_ALLOW_PRIVILEGED"
	EnvAllowBindSources = "CORNUS_ALLOW_BIND_SOURCES"
)

// Policy is what may be taken from the host.
type Policy struct {
	AllowPrivileged bool
	// BindPrefixes are host directories under which bind sources are allowed.
	BindPrefixes []string
	// ProjectDir, when set, is allowed too and named in refusals (the local
	// CLI allows the project directory by default).
	ProjectDir string
}

// FromEnv reads the policy from KEY=VALUE pairs. projectDir may be "".
func FromEnv(environ []string, projectDir string) Policy {
	p := Policy{ProjectDir: projectDir}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case EnvAllowPrivileged:
			p.AllowPrivileged = v == "1" || strings.EqualFold(v, "true") || strings.EqualFold(v, "yes")
		case EnvAllowBindSources:
			for _, pre := range strings.Split(v, ",") {
				if pre = strings.TrimSpace(pre); pre != "" {
					p.BindPrefixes = append(p.BindPrefixes, pre)
				}
			}
		}
	}
	return p
}

// Check returns a PermissionDenied error listing every refused field of the
// project, or nil.
func (p Policy) Check(proj spec.Project) error {
	var problems []string
	for _, name := range proj.ServiceNames() {
		problems = append(problems, p.appProblems("services."+name, proj.Services[name])...)
	}
	return denied(problems)
}

// CheckApp checks one app; at names it in messages (e.g. "container web").
func (p Policy) CheckApp(at string, a spec.App) error {
	return denied(p.appProblems(at, a))
}

func denied(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", strings.Join(problems, "\n  "), errdefs.ErrPermissionDenied)
}

func (p Policy) appProblems(at string, a spec.App) []string {
	var problems []string
	if a.Privileged && !p.AllowPrivileged {
		problems = append(problems, fmt.Sprintf("%s.privileged: privileged containers are refused; set %s=1 to allow them", at, EnvAllowPrivileged))
	}
	if a.Hooks != nil && !p.AllowPrivileged {
		for _, h := range append(append([]spec.Hook{}, a.Hooks.PostStart...), a.Hooks.PreStop...) {
			if h.Privileged {
				problems = append(problems, fmt.Sprintf("%s.hooks: privileged hook commands are refused; set %s=1 to allow them", at, EnvAllowPrivileged))
				break
			}
		}
	}
	for i, m := range a.Mounts {
		if !p.bindAllowed(m.Source) {
			problems = append(problems, fmt.Sprintf("%s.mounts[%d].source: bind mount of host path %s is refused: %s", at, i, m.Source, p.allowedText()))
		}
	}
	return problems
}

func (p Policy) allowedText() string {
	var allowed []string
	if p.ProjectDir != "" {
		allowed = append(allowed, p.ProjectDir+" (the project directory)")
	}
	allowed = append(allowed, p.BindPrefixes...)
	msg := "no host path is allowed"
	if len(allowed) > 0 {
		msg = "only paths under " + strings.Join(allowed, ", ") + " are allowed"
	}
	return fmt.Sprintf("%s; add a prefix to %s (comma-separated) to allow it", msg, EnvAllowBindSources)
}

func (p Policy) bindAllowed(source string) bool {
	src := realPath(source)
	prefixes := p.BindPrefixes
	if p.ProjectDir != "" {
		prefixes = append([]string{p.ProjectDir}, prefixes...)
	}
	for _, pre := range prefixes {
		if within(src, realPath(pre)) {
			return true
		}
	}
	return false
}

// realPath resolves symlinks of the longest existing ancestor, so a link
// inside an allowed directory cannot smuggle in a path outside it.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(path, prefix string) bool {
	if prefix == "/" {
		return true
	}
	return path == prefix || strings.HasPrefix(path, prefix+string(os.PathSeparator))
}
