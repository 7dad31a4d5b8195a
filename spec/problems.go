package spec

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a spec, located by its field path
// (services.web.ports[1].container) and, when known, its source line.
type Problem struct {
	Path    string
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s (line %d): %s", p.Path, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.Path, p.Message)
}

// Problems collects every problem found in one pass.
type Problems []Problem

func (ps *Problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (ps *Problems) addLine(path string, line int, msg string) {
	*ps = append(*ps, Problem{Path: path, Line: line, Message: msg})
}

// Err returns nil when there are no problems, else a *ValidationError.
func (ps Problems) Err(file string) error {
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{File: file, Problems: ps}
}

// ValidationError reports every problem found in a spec. Error() prints one
// problem per line, prefixed by the file when known.
type ValidationError struct {
	File     string
	Problems Problems
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	prefix := ""
	if e.File != "" {
		prefix = e.File + ": "
	}
	if len(e.Problems) == 1 {
		return prefix + e.Problems[0].String()
	}
	fmt.Fprintf(&b, "%s%d problems:", prefix, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}
