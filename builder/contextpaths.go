package builder

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"path"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// contextPaths are the parts of the context a Dockerfile reads: the
// sources of its COPY and ADD (those not --from a stage or image, nor a
// URL) and the sources of its RUN --mount=type=bind with no from — what
// BuildKit would ask the client for. all is true when that cannot be
// known (a source names a variable, or a bind mounts the whole context):
// then the whole context is read. A builder without BuildKit's session
// (podman's) is sent only these.
func contextPaths(df []byte) (patterns []string, all bool, err error) {
	res, err := parser.Parse(bytes.NewReader(df))
	if err != nil {
		return nil, false, fmt.Errorf("dockerfile: %w", err)
	}
	add := func(src string) bool {
		src = strings.TrimPrefix(path.Clean("/"+src), "/")
		if src == "" || strings.Contains(src, "$") {
			return false
		}
		patterns = append(patterns, src)
		return true
	}
	for _, n := range res.AST.Children {
		switch strings.ToLower(n.Value) {
		case "copy", "add":
			if hasFlag(n.Flags, "--from") {
				continue
			}
			var args []string
			for a := n.Next; a != nil; a = a.Next {
				args = append(args, a.Value)
			}
			if len(args) < 2 {
				continue
			}
			for _, src := range args[:len(args)-1] {
				if strings.Contains(src, "://") || strings.HasPrefix(src, "git@") {
					continue // fetched by the builder, not read from the context
				}
				if !add(src) {
					return nil, true, nil
				}
			}
		case "run":
			for _, f := range n.Flags {
				src, reads, err := bindSource(f)
				if err != nil {
					return nil, false, fmt.Errorf("dockerfile line %d: %s: %w", n.StartLine, f, err)
				}
				if reads && !add(src) {
					return nil, true, nil
				}
			}
		}
	}
	return patterns, false, nil
}

func hasFlag(flags []string, name string) bool {
	for _, f := range flags {
		if f == name || strings.HasPrefix(f, name+"=") {
			return true
		}
	}
	return false
}

// bindSource reads a RUN flag: whether it bind-mounts the context (a
// --mount of type bind, the default, with no from) and the source.
func bindSource(flag string) (string, bool, error) {
	v, ok := strings.CutPrefix(flag, "--mount=")
	if !ok {
		return "", false, nil
	}
	fields, err := csv.NewReader(strings.NewReader(v)).Read()
	if err != nil {
		return "", false, err
	}
	typ, src, from := "bind", "", ""
	for _, f := range fields {
		k, val, _ := strings.Cut(f, "=")
		switch strings.ToLower(k) {
		case "type":
			typ = val
		case "source", "src":
			src = val
		case "from":
			from = val
		}
	}
	return src, typ == "bind" && from == "", nil
}
