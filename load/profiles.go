package load

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// noEnabledServices explains a project whose every service sits behind an
// inactive profile (docker compose accepts such a file; cornus has nothing
// to deploy): it names the profiles that would enable them.
func noEnabledServices(p *types.Project) error {
	if len(p.Services) > 0 || len(p.DisabledServices) == 0 {
		return nil
	}
	byProfile := map[string][]string{}
	for name, s := range p.DisabledServices {
		for _, prof := range s.Profiles {
			byProfile[prof] = append(byProfile[prof], name)
		}
	}
	var groups []string
	for _, prof := range slices.Sorted(maps.Keys(byProfile)) {
		slices.Sort(byProfile[prof])
		groups = append(groups, fmt.Sprintf("%s: %s", prof, strings.Join(byProfile[prof], ", ")))
	}
	first := slices.Min(slices.Collect(maps.Keys(byProfile)))
	return fmt.Errorf("no service is enabled: every service is behind a profile that is not active (%s); enable one with --profile %s or COMPOSE_PROFILES=%s",
		strings.Join(groups, "; "), first, first)
}

// profiles are the profiles p's services name, enabled or not, sorted.
func profiles(p *types.Project) []string {
	set := map[string]bool{}
	for _, ss := range []types.Services{p.Services, p.DisabledServices} {
		for _, s := range ss {
			for _, prof := range s.Profiles {
				set[prof] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
