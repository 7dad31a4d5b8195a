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
	return capabilitiesFor(b.api)
}

func capabilitiesFor(api string) backends.Capabilities {
	gaps := map[string]string{
		"egress":                      "egress policy needs the caretaker companion, a later release",
		"resources.reservations.cpus": "Docker has no CPU reservation",
		"resources.reservations.pids": "Docker has no PID reservation (pids is a limit only)",
	}
	if versions.LessThan(api, apiStartInterval) {
		gaps["healthcheck.startInterval"] = "needs Docker API " + apiStartInterval + "+, the daemon speaks " + api
	}
	if versions.LessThan(api, apiSubpath) {
		gaps["volumes.subpath"] = "needs Docker API " + apiSubpath + "+, the daemon speaks " + api
	}
	return backends.Capabilities{Gaps: gaps, NativeHealthcheck: true, NativeRestart: true}
}

func (b *Backend) atLeast(api string) bool { return versions.GreaterThanOrEqualTo(b.api, api) }
