package charts

import (
	"fmt"
	"strconv"
	"strings"
)

// Merge merges over into base, maps key by key, anything else replaced
// (as Helm merges -f files and --set over values.yaml).
func Merge(base, over map[string]any) {
	for k, v := range over {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := base[k].(map[string]any); ok {
				Merge(bm, vm)
				continue
			}
		}
		base[k] = v
	}
}

// SetValue applies one --set KEY=VALUE to values: KEY is dotted
// (service.type), VALUE a bool, an integer, null or else a string, as
// Helm's --set reads it (lists and escapes are not supported here).
func SetValue(values map[string]any, kv string) error {
	key, val, ok := strings.Cut(kv, "=")
	if !ok || key == "" {
		return fmt.Errorf("--set %q: want KEY=VALUE", kv)
	}
	parts := strings.Split(key, ".")
	m := values
	for _, p := range parts[:len(parts)-1] {
		if p == "" {
			return fmt.Errorf("--set %q: empty key part", kv)
		}
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = typed(val)
	return nil
}

func typed(v string) any {
	switch v {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	return v
}
