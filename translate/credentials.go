package translate

import (
	"slices"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// credentials are a service's x-cornus-credentials, a source's paths
// made absolute against the project's directory (the client reads and
// runs them there, wherever the command runs).
func (t *translator) credentials(s types.ServiceConfig) []spec.Credential {
	cs := slices.Clone(compose.ServiceCredentials(s.Extensions))
	for i, c := range cs {
		if c.Source == nil {
			continue
		}
		src := c.Source.InDir(t.project.WorkingDir)
		src.Command = slices.Clone(src.Command)
		cs[i].Source = &src
	}
	return cs
}
