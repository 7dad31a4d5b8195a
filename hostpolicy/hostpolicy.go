package hostpolicy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// Check returns a *DeniedError listing every refused field of the project
// (its services and the volumes it declares), or nil.
func (p Policy) Check(proj spec.Project) error {
	var ps []Problem
	for _, name := range proj.ServiceNames() {
		ps = append(ps, p.appProblems("services."+name, proj.Services[name])...)
	}
	for _, key := range slices.Sorted(maps.Keys(proj.Volumes)) {
		ps = append(ps, p.volumeProblems("volumes."+key, proj.Volumes[key])...)
	}
	return denied(ps)
}

// CheckHooks checks what a verb that makes nothing (start, stop, down)
// takes from a spec it is handed: its hooks, run as execs.
func (p Policy) CheckHooks(proj spec.Project) error {
	var ps []Problem
	for _, name := range proj.ServiceNames() {
		ps = append(ps, p.hookProblems("services."+name, proj.Services[name])...)
	}
	return denied(ps)
}

// CheckApp checks one app and the volumes it mounts (by name; existing
// volumes with their current options). at prefixes field paths, e.g.
// "container web".
func (p Policy) CheckApp(at string, a spec.App, vols map[string]spec.Volume) error {
	ps := p.appProblems(at, a)
	for _, name := range slices.Sorted(maps.Keys(vols)) {
		ps = append(ps, p.volumeProblems(at+".volumes."+name, vols[name])...)
	}
	return denied(ps)
}

// CheckVolume checks a volume about to be created.
func (p Policy) CheckVolume(at string, v spec.Volume) error {
	return denied(p.volumeProblems(at, v))
}

// CheckExec checks a process about to be run in a container.
func (p Policy) CheckExec(at string, privileged bool) error {
	if privileged && !p.AllowPrivileged {
		return denied([]Problem{p.power(at+".privileged", "a privileged exec gets every capability and device of the host")})
	}
	return nil
}

// power is a refused host-power field, unless privileged use is allowed
// (callers check AllowPrivileged first).
func (p Policy) power(path, why string) Problem {
	return Problem{Path: path, Message: why, Allow: EnvAllowPrivileged + "=1"}
}

func (p Policy) bindProblem(path, source string) []Problem {
	if p.bindAllowed(source) {
		return nil
	}
	return []Problem{{Path: path, Message: "bind mount of host path " + source + " is refused: " + p.allowedText(), Allow: EnvAllowBindSources}}
}

func (p Policy) allowedText() string {
	var allowed []string
	if p.ProjectDir != "" {
		allowed = append(allowed, p.ProjectDir+" (the project directory)")
	}
	allowed = append(allowed, p.BindPrefixes...)
	if len(allowed) == 0 {
		return "no host path is allowed"
	}
	return "only paths under " + strings.Join(allowed, ", ") + " are allowed"
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

// fmtIndex names a list element: path[i].
func fmtIndex(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
