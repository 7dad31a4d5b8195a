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
	return backends.Capabilities{Gaps: gaps, Features: backends.AllFeatures, NativeHealthcheck: true, NativeRestart: true, LoopbackRegistries: true}
}

func (b *Backend) atLeast(api string) bool { return versions.GreaterThanOrEqualTo(b.api, api) }

// dockerd offers every optional feature.
var (
	_ backends.Backend          = (*Backend)(nil)
	_ backends.Images           = (*Backend)(nil)
	_ backends.Puller           = (*Backend)(nil)
	_ backends.Networks         = (*Backend)(nil)
	_ backends.NetworkConnector = (*Backend)(nil)
	_ backends.Signaler         = (*Backend)(nil)
	_ backends.Restarter        = (*Backend)(nil)
	_ backends.Pauser           = (*Backend)(nil)
	_ backends.Attacher         = (*Backend)(nil)
	_ backends.Copier           = (*Backend)(nil)
	_ backends.ProcessLister    = (*Backend)(nil)
	_ backends.Renamer          = (*Backend)(nil)
	_ backends.EventSource      = (*Backend)(nil)
	_ backends.StatsSource      = (*Backend)(nil)
)
