package spec

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkNode walks a YAML node against the Go type it will decode into and
// records every unknown field and shape/type mismatch with its field path,
// so a user sees all mistakes at once instead of the first one.
func checkNode(n *yaml.Node, t reflect.Type, path string, probs *Problems) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		target := reflect.New(t)
		if err := n.Decode(target.Interface()); err != nil {
			probs.addLine(path, n.Line, trimYAMLError(err))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		checkNode(n, t.Elem(), path, probs)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			probs.addLine(path, n.Line, "expected a mapping, got "+kindName(n))
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			f, ok := fields[key.Value]
			if !ok {
				probs.addLine(join(path, key.Value), key.Line, unknownFieldMsg(key.Value, fields))
				continue
			}
			checkNode(val, f.Type, join(path, key.Value), probs)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			probs.addLine(path, n.Line, "expected a mapping, got "+kindName(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkNode(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), probs)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			probs.addLine(path, n.Line, "expected a list, got "+kindName(n))
			return
		}
		for i, c := range n.Content {
			checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), probs)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			probs.addLine(path, n.Line, "expected a string, got "+kindName(n))
		}
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			probs.addLine(path, n.Line, fmt.Sprintf("expected true or false, got %s", describe(n)))
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n.Kind != yaml.ScalarNode {
			probs.addLine(path, n.Line, "expected an integer, got "+kindName(n))
		} else if _, err := strconv.ParseInt(n.Value, 0, 64); err != nil {
			probs.addLine(path, n.Line, fmt.Sprintf("expected an integer, got %s", describe(n)))
		}
	case reflect.Uint32, reflect.Uint64, reflect.Uint:
		if n.Kind != yaml.ScalarNode {
			probs.addLine(path, n.Line, "expected a non-negative integer, got "+kindName(n))
		} else if _, err := strconv.ParseUint(n.Value, 0, 32); err != nil {
			probs.addLine(path, n.Line, fmt.Sprintf("expected a non-negative integer, got %s", describe(n)))
		}
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode {
			probs.addLine(path, n.Line, "expected a number, got "+kindName(n))
		} else if _, err := strconv.ParseFloat(n.Value, 64); err != nil {
			probs.addLine(path, n.Line, fmt.Sprintf("expected a number, got %s", describe(n)))
		}
	}
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// yamlFields maps YAML keys to struct fields, descending into inline structs.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

func unknownFieldMsg(key string, fields map[string]reflect.StructField) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	if best := Suggest(key, names); best != "" {
		return fmt.Sprintf("unknown field %q; did you mean %q?", key, best)
	}
	return fmt.Sprintf("unknown field %q", key)
}

// Suggest returns the candidate closest to a mistyped key (at most two
// edits away, ignoring case), or "".
func Suggest(key string, candidates []string) string {
	sorted := sortedCopy(candidates)
	best, bestDist := "", 3
	for _, k := range sorted {
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return describe(n)
	}
}

func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return kindName(n)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func trimYAMLError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: unmarshal errors:\n")
	s = strings.TrimPrefix(s, "yaml: ")
	return strings.TrimSpace(s)
}

// DecodeStrict decodes a generic value (as produced by a YAML or JSON
// parser, e.g. a Compose x-* extension) into out with the same strict field
// checking as deploy.yaml. Problem paths are prefixed with path.
func DecodeStrict(raw any, path string, out any) error {
	data, err := yaml.Marshal(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	n := &doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	var probs Problems
	checkNode(n, reflect.TypeOf(out).Elem(), path, &probs)
	if len(probs) > 0 {
		for i := range probs {
			probs[i].Line = 0 // lines of the re-marshalled text mean nothing to the user
		}
		return probs.Err("")
	}
	if err := n.Decode(out); err != nil {
		return fmt.Errorf("%s: %s", path, trimYAMLError(err))
	}
	return nil
}
