package compose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// UpOverrides are up's flags that change the loaded project, as docker
// compose applies them: --scale SERVICE=N and --pull POLICY.
type UpOverrides struct {
	Scale []string // SERVICE=N
	Pull  string   // always, missing, never, build; "": the file's
}

// Apply sets the replicas and pull policies the flags ask for.
func (o UpOverrides) Apply(p *types.Project) error {
	for _, sc := range o.Scale {
		name, n, ok := strings.Cut(sc, "=")
		count, err := strconv.Atoi(n)
		if !ok || err != nil || count < 0 {
			return fmt.Errorf("--scale %q: want SERVICE=NUMBER", sc)
		}
		s, found := p.Services[name]
		if !found {
			return fmt.Errorf("--scale %s: no such service: %s", sc, name)
		}
		s.SetScale(count)
		p.Services[name] = s
	}
	switch o.Pull {
	case "":
		return nil
	case types.PullPolicyAlways, types.PullPolicyMissing, types.PullPolicyNever, types.PullPolicyBuild:
	default:
		return fmt.Errorf("--pull %q: want always, missing, never or build", o.Pull)
	}
	for name, s := range p.Services {
		if o.Pull == types.PullPolicyBuild && s.Build == nil {
			continue // only what has a build section can be built
		}
		s.PullPolicy = o.Pull
		p.Services[name] = s
	}
	return nil
}
