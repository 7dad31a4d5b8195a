package translate

import (
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/spec"
)

func (t *translator) resources(s types.ServiceConfig) *spec.Resources {
	var limits, reservations spec.ResourceLimits
	if s.Deploy != nil {
		r := s.Deploy.Resources
		if r.Limits != nil {
			limits = spec.ResourceLimits{CPUs: float64(r.Limits.NanoCPUs), Memory: spec.Bytes(r.Limits.MemoryBytes), Pids: r.Limits.Pids}
			t.unsupportedResource(s.Name, "deploy.resources.limits", r.Limits)
		}
		if r.Reservations != nil {
			reservations = spec.ResourceLimits{CPUs: float64(r.Reservations.NanoCPUs), Memory: spec.Bytes(r.Reservations.MemoryBytes)}
			if r.Reservations.Pids != 0 {
				t.warn(s.Name, "deploy.resources.reservations.pids", "a pids reservation means nothing; set a limit")
			}
			t.unsupportedResource(s.Name, "deploy.resources.reservations", r.Reservations)
		}
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"mode", s.Deploy.Mode != "" && s.Deploy.Mode != "replicated"},
			{"labels", len(s.Deploy.Labels) > 0},
			{"rollback_config", s.Deploy.RollbackConfig != nil},
			{"placement", len(s.Deploy.Placement.Constraints)+len(s.Deploy.Placement.Preferences) > 0 || s.Deploy.Placement.MaxReplicas != 0},
			{"endpoint_mode", s.Deploy.EndpointMode != ""},
		} {
			if f.set {
				t.warn(s.Name, "deploy."+f.name, "swarm scheduling settings are not supported; ignored")
			}
		}
	}
	// The legacy attributes fill what deploy.resources left unset.
	if limits.CPUs == 0 {
		limits.CPUs = float64(s.CPUS)
	}
	if limits.Memory == 0 {
		limits.Memory = spec.Bytes(s.MemLimit)
	}
	if limits.Pids == 0 {
		limits.Pids = s.PidsLimit
	}
	if reservations.Memory == 0 {
		reservations.Memory = spec.Bytes(s.MemReservation)
	}
	var out spec.Resources
	if limits != (spec.ResourceLimits{}) {
		out.Limits = &limits
	}
	if reservations != (spec.ResourceLimits{}) {
		out.Reservations = &reservations
	}
	if out.Limits == nil && out.Reservations == nil {
		return nil
	}
	return &out
}

func (t *translator) unsupportedResource(service, at string, r *types.Resource) {
	if len(r.Devices) > 0 {
		t.warn(service, at+".devices", "device (GPU) requests are not supported; ignored")
	}
	if len(r.GenericResources) > 0 {
		t.warn(service, at+".generic_resources", "generic resources are not supported; ignored")
	}
}

func devices(ds []types.DeviceMapping) []spec.Device {
	var out []spec.Device
	for _, d := range ds {
		out = append(out, spec.Device{Source: d.Source, Target: d.Target, Permissions: d.Permissions})
	}
	return out
}

func ulimits(u map[string]*types.UlimitsConfig) map[string]spec.Ulimit {
	if len(u) == 0 {
		return nil
	}
	out := make(map[string]spec.Ulimit, len(u))
	for name, l := range u {
		if l.Single != 0 {
			out[name] = spec.Ulimit{Soft: int64(l.Single), Hard: int64(l.Single)}
		} else {
			out[name] = spec.Ulimit{Soft: int64(l.Soft), Hard: int64(l.Hard)}
		}
	}
	return out
}

func logging(s types.ServiceConfig) *spec.Logging {
	if s.Logging != nil {
		return &spec.Logging{Driver: s.Logging.Driver, Options: nonEmptyMap(s.Logging.Options)}
	}
	if s.LogDriver != "" || len(s.LogOpt) > 0 {
		return &spec.Logging{Driver: s.LogDriver, Options: nonEmptyMap(s.LogOpt)}
	}
	return nil
}
