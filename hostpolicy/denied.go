package hostpolicy

import (
	"strings"

	"github.com/containerd/errdefs"
)

// Problem is one refused field.
type Problem struct {
	Path    string // the field, e.g. services.web.capAdd[0]
	Message string // what it would take from the host
	Allow   string // what allows it: CORNUS_ALLOW_PRIVILEGED=1 or CORNUS_ALLOW_BIND_SOURCES
}

func (p Problem) String() string {
	if p.Allow == EnvAllowBindSources {
		return p.Path + ": " + p.Message + "; add a prefix to " + EnvAllowBindSources + " (comma-separated) to allow it"
	}
	return p.Path + ": " + p.Message + " and is refused; set " + p.Allow + " to allow it"
}

// DeniedError lists every refused field. It is an errdefs
// PermissionDenied error.
type DeniedError struct {
	Problems []Problem
}

func denied(ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	return &DeniedError{Problems: ps}
}

func (e *DeniedError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return "refused by the host policy:\n  " + strings.Join(lines, "\n  ")
}

// Unwrap makes errdefs.IsPermissionDenied true.
func (e *DeniedError) Unwrap() error { return errdefs.ErrPermissionDenied }

// Renamed returns a copy whose paths are rewritten by name, so each front
// end names fields as its users write them (Compose attributes, Engine API
// fields).
func (e *DeniedError) Renamed(name func(string) string) *DeniedError {
	out := &DeniedError{Problems: make([]Problem, len(e.Problems))}
	for i, p := range e.Problems {
		p.Path = name(p.Path)
		out.Problems[i] = p
	}
	return out
}
