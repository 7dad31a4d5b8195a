package spec

import "fmt"

// Warning says that a field was not honored (dropped, approximated or
// replaced). Nothing is dropped silently: every such case becomes one
// Warning naming the service and the field.
type Warning struct {
	Service string // empty for project-level fields
	Field   string // Compose or spec field path, e.g. "deploy.placement"
	Message string
}

func (w Warning) String() string {
	switch {
	case w.Service != "" && w.Field != "":
		return fmt.Sprintf("service %q: %s: %s", w.Service, w.Field, w.Message)
	case w.Service != "":
		return fmt.Sprintf("service %q: %s", w.Service, w.Message)
	case w.Field != "":
		return fmt.Sprintf("%s: %s", w.Field, w.Message)
	}
	return w.Message
}
