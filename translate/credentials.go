package translate

import (
	"path/filepath"
	"slices"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// credentials are a service's x-cornus-credentials, a file source made
// absolute against the project's directory (the client reads it there,
// wherever the command runs).
func (t *translator) credentials(s types.ServiceConfig) []spec.Credential {
	cs := slices.Clone(compose.ServiceCredentials(s.Extensions))
	for i, c := range cs {
		if c.Source == nil {
			continue
		}
		src := *c.Source
		src.Command = slices.Clone(src.Command)
		if src.File != "" && !filepath.IsAbs(src.File) {
			src.File = filepath.Join(t.project.WorkingDir, src.File)
		}
		cs[i].Source = &src
	}
	return cs
}
