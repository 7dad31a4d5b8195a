package compose

import (
	"reflect"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// ServiceAttributes maps each YAML attribute of compose-go's ServiceConfig
// (inline structs flattened) to its field index path, for reflection.
func ServiceAttributes() map[string][]int {
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			idx := append(append([]int{}, prefix...), i)
			switch {
			case strings.Contains(opts, "inline") && name == "":
				walk(f.Type, idx)
			case name == "" || name == "-" || strings.HasPrefix(name, "#") || name == "name":
			default:
				out[name] = idx
			}
		}
	}
	walk(reflect.TypeFor[types.ServiceConfig](), nil)
	return out
}

func serviceAttributeNames() []string {
	attrs := ServiceAttributes()
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
