package builder

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// baseImages lists the images a Dockerfile's stages start FROM, with the
// ARGs before the first FROM expanded (their defaults, overridden by
// args), less scratch and the names of earlier stages: what a builder
// that cannot see the backend's store must be handed as named contexts.
func baseImages(dockerfile []byte, args map[string]string) ([]string, error) {
	res, err := parser.Parse(bytes.NewReader(dockerfile))
	if err != nil {
		return nil, fmt.Errorf("dockerfile: %w", err)
	}
	lex := shell.NewLex(res.EscapeToken)
	meta := map[string]string{}
	stages := map[string]bool{}
	seen := map[string]bool{}
	var out []string
	inStage := false
	for _, n := range res.AST.Children {
		switch strings.ToLower(n.Value) {
		case "arg":
			if inStage {
				continue // a stage's own ARGs do not reach FROM lines
			}
			for a := n.Next; a != nil; a = a.Next {
				name, def, hasDef := strings.Cut(a.Value, "=")
				if v, ok := args[name]; ok {
					meta[name] = v
				} else if hasDef {
					v, _, err := lex.ProcessWord(def, envOf(meta))
					if err != nil {
						return nil, fmt.Errorf("dockerfile line %d: ARG %s: %w", n.StartLine, name, err)
					}
					meta[name] = v
				}
			}
		case "from":
			inStage = true
			if n.Next == nil {
				return nil, fmt.Errorf("dockerfile line %d: FROM needs an image", n.StartLine)
			}
			base, _, err := lex.ProcessWord(n.Next.Value, envOf(meta))
			if err != nil {
				return nil, fmt.Errorf("dockerfile line %d: FROM %s: %w", n.StartLine, n.Next.Value, err)
			}
			if base != "" && !strings.EqualFold(base, "scratch") && !stages[strings.ToLower(base)] && !seen[base] {
				seen[base] = true
				out = append(out, base)
			}
			if as := n.Next.Next; as != nil && strings.EqualFold(as.Value, "as") && as.Next != nil {
				stages[strings.ToLower(as.Next.Value)] = true
			}
		}
	}
	return out, nil
}

type envMap map[string]string

func envOf(m map[string]string) shell.EnvGetter { return envMap(m) }

func (e envMap) Get(k string) (string, bool) { v, ok := e[k]; return v, ok }

func (e envMap) Keys() []string { return slices.Sorted(maps.Keys(e)) }
