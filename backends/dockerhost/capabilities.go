package dockerhost

import (
	"github.com/moby/moby/client/pkg/versions"

	"github.com/cornus-dev/cornus/backends"
)

// API versions that gate spec fields.
const (
	apiStartInterval = "1.44" // HealthConfig.StartInterval
	apiSubpath       = "1.45" // VolumeOptions.Subpath
	apiStopSignal    = "1.42" // signal= on stop and restart
)

// Capabilities reports what this daemon honors at the negotiated API
// version.
func (b *Backend) Capabilities() backends.Capabilities {
	c := capabilitiesFor(b.api)
	c.Features = backends.FeaturesOf(b)
	return c
}

func capabilitiesFor(api string) backends.Capabilities {
	gaps := map[string]string{
		"resources.reservations.cpus": "Docker has no CPU reservation",
		"resources.reservations.pids": "Docker has no PID reservation (pids is a limit only)",
		"update":                      backends.GapUpdate,
	}
	if versions.LessThan(api, apiStartInterval) {
		gaps["healthcheck.startInterval"] = "needs Docker API " + apiStartInterval + "+, the daemon speaks " + api
	}
	if versions.LessThan(api, apiSubpath) {
		gaps["volumes.subpath"] = "needs Docker API " + apiSubpath + "+, the daemon speaks " + api
	}
	// dockerd always counts 127.0.0.0/8 among its insecure registries.
	return backends.Capabilities{Gaps: gaps, NativeHealthcheck: true, LoopbackRegistries: true}
}

func (b *Backend) atLeast(api string) bool { return versions.GreaterThanOrEqualTo(b.api, api) }
