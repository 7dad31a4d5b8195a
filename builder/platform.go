package builder

import (
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
)

// checkPlatforms accepts the platforms a build names (the App's platform,
// build.platforms) only when they are this host's: cornus builds for the
// host, with no emulation. It returns the one to ask for ("" for none).
func checkPlatforms(service, appPlatform string, buildPlatforms []string) (string, error) {
	host := platforms.DefaultSpec()
	match := platforms.Only(host)
	check := func(field, p string) error {
		spec, err := platforms.Parse(p)
		if err != nil {
			return fmt.Errorf("service %s: %s: %q: %v: %w", service, field, p, err, errdefs.ErrInvalidArgument)
		}
		if !match.Match(spec) {
			return fmt.Errorf("service %s: %s: %s is not this host's platform (%s): cornus builds for the host only, with no emulation: %w",
				service, field, p, platforms.Format(host), errdefs.ErrNotImplemented)
		}
		return nil
	}
	if appPlatform != "" {
		if err := check("platform", appPlatform); err != nil {
			return "", err
		}
	}
	for _, p := range buildPlatforms {
		if err := check("build.platforms", p); err != nil {
			return "", err
		}
	}
	if appPlatform != "" {
		return appPlatform, nil
	}
	if len(buildPlatforms) > 0 {
		return buildPlatforms[0], nil
	}
	return "", nil
}
