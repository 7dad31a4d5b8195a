package translate

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// Translate maps a loaded Compose project onto the native spec. It is pure:
// no I/O, input untouched. Every Compose attribute is either carried into
// the result or named in a warning.
func Translate(p *types.Project) (spec.Project, []spec.Warning) {
	t := &translator{project: p}
	p = p.WithoutUnnecessaryResources()
	out := spec.Project{Name: p.Name, Services: map[string]spec.App{}}
	for _, name := range p.ServiceNames() {
		if s := p.Services[name]; s.Provider != nil {
			// Provider services are run by a compose plugin, not as
			// containers: leave them (and dependencies on them) out.
			t.warn(name, "provider", "provider services (type %q) are not supported; service skipped", s.Provider.Type)
			continue
		}
		out.Services[name] = t.app(p.Services[name])
	}
	for name, a := range out.Services {
		for dep := range a.DependsOn {
			if s, ok := p.Services[dep]; ok && s.Provider != nil {
				t.warn(name, "depends_on."+dep, "dependency on skipped provider service %q dropped", dep)
				delete(a.DependsOn, dep)
			}
		}
	}
	for _, name := range p.NetworkNames() {
		if out.Networks == nil {
			out.Networks = map[string]spec.Network{}
		}
		out.Networks[name] = t.network(name, p.Networks[name])
	}
	for _, name := range p.VolumeNames() {
		if out.Volumes == nil {
			out.Volumes = map[string]spec.Volume{}
		}
		out.Volumes[name] = t.volume(p.Volumes[name])
	}
	if len(p.Jobs) > 0 {
		t.warn("", "jobs", "Compose jobs are not supported; ignored")
	}
	if len(p.Models) > 0 {
		t.warn("", "models", "AI models are not supported; ignored")
	}
	return out.Normalize(), t.warnings
}

type translator struct {
	project  *types.Project
	warnings []spec.Warning
}

func (t *translator) warn(service, field, format string, args ...any) {
	t.warnings = append(t.warnings, spec.Warning{Service: service, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (t *translator) app(s types.ServiceConfig) spec.App {
	t.warnings = append(t.warnings, unmappedWarnings(s)...)
	a := spec.App{
		Name:          s.Name,
		Image:         s.Image,
		PullPolicy:    s.PullPolicy,
		Platform:      s.Platform,
		ContainerName: s.ContainerName,
		WorkingDir:    s.WorkingDir,
		User:          s.User,
		GroupAdd:      s.GroupAdd,
		Hostname:      s.Hostname,
		Domainname:    s.DomainName,
		TTY:           s.Tty,
		StdinOpen:     s.StdinOpen,
		ReadOnly:      s.ReadOnly,
		Privileged:    s.Privileged,
		CapAdd:        s.CapAdd,
		CapDrop:       s.CapDrop,
		SecurityOpt:   s.SecurityOpt,
		StopSignal:    s.StopSignal,
		Init:          s.Init,
		PidMode:       s.Pid,
		IpcMode:       s.Ipc,
		UTSMode:       s.Uts,
		UsernsMode:    s.UserNSMode,
		CgroupnsMode:  s.Cgroup,
		NetworkMode:   s.NetworkMode,
		DNS:           s.DNS,
		DNSSearch:     s.DNSSearch,
		DNSOptions:    s.DNSOpts,
		Expose:        s.Expose,
		ShmSize:       spec.Bytes(s.ShmSize),
		Egress:        compose.Egress(t.project.Extensions),
	}
	if s.Command != nil {
		a.Command = spec.Command(s.Command)
	}
	if s.Entrypoint != nil {
		a.Entrypoint = spec.Command(s.Entrypoint)
	}
	if e := compose.Egress(s.Extensions); e != nil {
		a.Egress = e // a service's policy replaces the project default entirely
	}
	if s.Build != nil {
		if a.Image == "" {
			a.Image = t.project.Name + "-" + s.Name // docker compose's default
		}
		t.warn(s.Name, "build", "cornus does not build images yet; image %q must already exist (cornus image load -i FILE.tar)", a.Image)
	}
	if s.PullPolicy == types.PullPolicyBuild {
		a.PullPolicy = types.PullPolicyMissing
	}
	if s.StopGracePeriod != nil {
		a.StopGracePeriod = spec.DurationOf(time.Duration(*s.StopGracePeriod))
	}
	a.Replicas = t.replicas(s)
	a.Update = t.update(s)
	a.Restart = t.restart(s)
	a.Env = environment(s.Environment)
	a.Labels = nonEmptyMap(s.Labels)
	a.ExtraHosts = hosts(s.ExtraHosts)
	a.Sysctls = nonEmptyMap(s.Sysctls)
	a.Ports = t.ports(s)
	a.Networks = t.networks(s)
	t.links(s)
	a.Mounts, a.Volumes, a.Tmpfs = t.volumes(s)
	a.Tmpfs = append(a.Tmpfs, t.tmpfs(s)...)
	a.Secrets = t.fileMounts(s.Name, "secrets", secretRefs(s.Secrets), "/run/secrets/")
	a.Configs = t.fileMounts(s.Name, "configs", configRefs(s.Configs), "/")
	a.Healthcheck = healthcheck(s.HealthCheck)
	a.DependsOn = dependsOn(s.DependsOn)
	a.Resources = t.resources(s)
	a.Devices = devices(s.Devices)
	a.DeviceCgroupRules = s.DeviceCgroupRules
	a.Ulimits = ulimits(s.Ulimits)
	a.Logging = logging(s)
	a.Hooks = t.hooks(s)
	if d := compose.Devcontainer(s.Extensions); d != nil {
		dc := spec.DeepCopy(d.Devcontainer)
		a.Devcontainer = &dc
		if d.Hooks != nil {
			a.Hooks = mergeHooks(a.Hooks, spec.DeepCopy(*d.Hooks))
		}
	}
	return spec.DeepCopy(a)
}

func (t *translator) replicas(s types.ServiceConfig) *int {
	if s.Scale == nil && (s.Deploy == nil || s.Deploy.Replicas == nil) {
		return nil
	}
	n := s.GetScale()
	return &n
}

// update keeps deploy.update_config's batch size and order; swarm's
// rollout monitoring (delay, monitor, failure action and ratio) is warned.
func (t *translator) update(s types.ServiceConfig) *spec.UpdateConfig {
	if s.Deploy == nil || s.Deploy.UpdateConfig == nil {
		return nil
	}
	u := s.Deploy.UpdateConfig
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"delay", u.Delay != 0}, {"failure_action", u.FailureAction != ""}, {"monitor", u.Monitor != 0}, {"max_failure_ratio", u.MaxFailureRatio != 0},
	} {
		if f.set {
			t.warn(s.Name, "deploy.update_config."+f.name, "swarm's rollout monitoring is not supported; ignored")
		}
	}
	out := &spec.UpdateConfig{Order: u.Order}
	switch {
	case u.Parallelism == nil:
	case *u.Parallelism == 0:
		out.Parallelism = spec.UpdateAllAtOnce // swarm's 0: every replica at once
	default:
		out.Parallelism = int(min(*u.Parallelism, spec.UpdateAllAtOnce))
	}
	return out
}

// restart maps restart, letting deploy.restart_policy win as docker
// compose does.
func (t *translator) restart(s types.ServiceConfig) string {
	if s.Deploy == nil || s.Deploy.RestartPolicy == nil {
		return s.Restart
	}
	rp := s.Deploy.RestartPolicy
	if rp.Delay != nil {
		t.warn(s.Name, "deploy.restart_policy.delay", "a restart delay is not supported; the runtime's backoff applies")
	}
	if rp.Window != nil {
		t.warn(s.Name, "deploy.restart_policy.window", "a restart window is not supported")
	}
	switch rp.Condition {
	case "none":
		return spec.RestartNo
	case "on-failure":
		if rp.MaxAttempts != nil {
			return fmt.Sprintf("%s:%d", spec.RestartOnFailure, *rp.MaxAttempts)
		}
		return spec.RestartOnFailure
	default: // "any" and unset
		if rp.MaxAttempts != nil {
			t.warn(s.Name, "deploy.restart_policy.max_attempts", "only applies with condition on-failure")
		}
		return spec.RestartAlways
	}
}

func environment(env types.MappingWithEquals) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if v != nil { // a bare KEY that resolved to nothing stays unset, as in docker compose
			out[k] = *v
		}
	}
	return nonEmptyMap(out)
}

func nonEmptyMap[M ~map[string]string](m M) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func hosts(h types.HostsList) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string][]string, len(h))
	for k, v := range h {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func (t *translator) ports(s types.ServiceConfig) []spec.Port {
	var out []spec.Port
	for _, p := range s.Ports {
		port := spec.Port{Name: p.Name, HostIP: p.HostIP, Container: int(p.Target), Protocol: p.Protocol}
		if p.Published != "" {
			lo, hi, isRange := strings.Cut(p.Published, "-")
			port.Host, _ = strconv.Atoi(lo)
			if isRange {
				port.HostEnd, _ = strconv.Atoi(hi)
			}
		}
		if p.AppProtocol != "" {
			t.warn(s.Name, "ports.app_protocol", "application protocol %q of container port %d is not supported; ignored", p.AppProtocol, p.Target)
		}
		out = append(out, port)
	}
	return out
}

func (t *translator) networks(s types.ServiceConfig) []spec.NetworkAttachment {
	var out []spec.NetworkAttachment
	for _, name := range s.NetworksByPriority() {
		n := s.Networks[name]
		att := spec.NetworkAttachment{Name: name}
		if n != nil {
			att.Aliases = n.Aliases
			att.IPv4 = n.Ipv4Address
			att.IPv6 = n.Ipv6Address
			at := "networks." + name
			for _, unsupported := range []struct {
				field string
				set   bool
			}{
				{"driver_opts", len(n.DriverOpts) > 0},
				{"gw_priority", n.GatewayPriority != 0},
				{"interface_name", n.InterfaceName != ""},
				{"link_local_ips", len(n.LinkLocalIPs) > 0},
				{"mac_address", n.MacAddress != ""},
			} {
				if unsupported.set {
					t.warn(s.Name, at+"."+unsupported.field, "not supported; ignored")
				}
			}
			if !n.ServiceNameAliasEnabled() {
				t.warn(s.Name, at+".use_service_name_alias", "the service name is always registered as an alias")
			}
		}
		out = append(out, att)
	}
	return out
}

func (t *translator) links(s types.ServiceConfig) {
	for i, l := range s.Links {
		if svc, alias, ok := strings.Cut(l, ":"); ok && alias != svc {
			t.warn(s.Name, fmt.Sprintf("links[%d]", i), "link alias %q is not created; reach the service as %q or add a network alias", alias, svc)
		}
	}
}

func (t *translator) volumes(s types.ServiceConfig) ([]spec.Mount, []spec.VolumeMount, []spec.Tmpfs) {
	var mounts []spec.Mount
	var vols []spec.VolumeMount
	var tmpfs []spec.Tmpfs
	for i, v := range s.Volumes {
		at := fmt.Sprintf("volumes[%d]", i)
		switch v.Type {
		case types.VolumeTypeBind:
			m := spec.Mount{Source: v.Source, Target: v.Target, ReadOnly: v.ReadOnly}
			if v.Bind != nil {
				m.CreateHostPath = bool(v.Bind.CreateHostPath)
				m.Propagation = v.Bind.Propagation
				if v.Bind.SELinux != "" {
					t.warn(s.Name, at+".bind.selinux", "SELinux relabeling is not supported; ignored")
				}
				if v.Bind.Recursive != "" {
					t.warn(s.Name, at+".bind.recursive", "recursive bind options are not supported; ignored")
				}
			}
			mounts = append(mounts, m)
		case types.VolumeTypeVolume:
			vm := spec.VolumeMount{Source: v.Source, Target: v.Target, ReadOnly: v.ReadOnly}
			if v.Volume != nil {
				vm.NoCopy = v.Volume.NoCopy
				vm.Subpath = v.Volume.Subpath
				if len(v.Volume.Labels) > 0 {
					t.warn(s.Name, at+".volume.labels", "labels on a service's volume mount are not supported; label the volume itself")
				}
			}
			vols = append(vols, vm)
		case types.VolumeTypeTmpfs:
			tm := spec.Tmpfs{Target: v.Target}
			if v.Tmpfs != nil {
				tm.Size = spec.Bytes(v.Tmpfs.Size)
				tm.Mode = spec.FileMode(v.Tmpfs.Mode)
			}
			tmpfs = append(tmpfs, tm)
		default:
			t.warn(s.Name, at, "volume type %q is not supported; ignored", v.Type)
		}
	}
	return mounts, vols, tmpfs
}

// tmpfs parses the service-level tmpfs list ("/run" or
// "/run:size=64m,mode=1777").
func (t *translator) tmpfs(s types.ServiceConfig) []spec.Tmpfs {
	var out []spec.Tmpfs
	for i, entry := range s.Tmpfs {
		target, opts, _ := strings.Cut(entry, ":")
		tm := spec.Tmpfs{Target: target}
		for _, o := range strings.Split(opts, ",") {
			k, v, _ := strings.Cut(o, "=")
			switch k {
			case "":
			case "size":
				if b, err := spec.ParseBytes(v); err == nil {
					tm.Size = b
					continue
				}
				t.warn(s.Name, fmt.Sprintf("tmpfs[%d]", i), "size %q is not a size; ignored", v)
			case "mode":
				if m, err := spec.ParseFileMode(v); err == nil {
					tm.Mode = m
					continue
				}
				t.warn(s.Name, fmt.Sprintf("tmpfs[%d]", i), "mode %q is not an octal mode; ignored", v)
			case "rw":
			default:
				t.warn(s.Name, fmt.Sprintf("tmpfs[%d]", i), "option %q is not supported; ignored", o)
			}
		}
		out = append(out, tm)
	}
	return out
}

func secretRefs(refs []types.ServiceSecretConfig) []types.FileReferenceConfig {
	out := make([]types.FileReferenceConfig, len(refs))
	for i, r := range refs {
		out[i] = types.FileReferenceConfig(r)
	}
	return out
}

func configRefs(refs []types.ServiceConfigObjConfig) []types.FileReferenceConfig {
	out := make([]types.FileReferenceConfig, len(refs))
	for i, r := range refs {
		out[i] = types.FileReferenceConfig(r)
	}
	return out
}

// fileMounts resolves secret or config references against the project's
// top-level definitions. Targets default to dir+name; relative targets are
// placed under dir.
func (t *translator) fileMounts(service, kind string, refs []types.FileReferenceConfig, dir string) []spec.FileMount {
	var out []spec.FileMount
	for i, r := range refs {
		at := fmt.Sprintf("%s[%d]", kind, i)
		var def types.FileObjectConfig
		if kind == "secrets" {
			def = types.FileObjectConfig(t.project.Secrets[r.Source])
		} else {
			def = types.FileObjectConfig(t.project.Configs[r.Source])
		}
		fm := spec.FileMount{Name: r.Source, UID: r.UID, GID: r.GID}
		switch {
		case bool(def.External):
			t.warn(service, at, "external %s %q (a swarm object) is not supported; ignored", strings.TrimSuffix(kind, "s"), r.Source)
			continue
		case def.Environment != "":
			fm.Environment = def.Environment
			value := def.Content
			fm.Value = &value
		case def.File != "":
			fm.File = def.File
		default:
			fm.Content = def.Content
		}
		if def.Driver != "" || def.TemplateDriver != "" {
			t.warn(service, at, "%s drivers are not supported; ignored", kind)
		}
		switch {
		case r.Target == "":
			fm.Target = dir + r.Source
		case path.IsAbs(r.Target):
			fm.Target = r.Target
		default:
			fm.Target = dir + r.Target
		}
		if r.Mode != nil {
			m := spec.FileMode(*r.Mode)
			fm.Mode = &m
		}
		out = append(out, fm)
	}
	return out
}

func healthcheck(h *types.HealthCheckConfig) *spec.Healthcheck {
	if h == nil {
		return nil
	}
	out := &spec.Healthcheck{Test: h.Test, Disable: h.Disable}
	conv := func(d *types.Duration) *spec.Duration {
		if d == nil {
			return nil
		}
		return spec.DurationOf(time.Duration(*d))
	}
	out.Interval, out.Timeout = conv(h.Interval), conv(h.Timeout)
	out.StartPeriod, out.StartInterval = conv(h.StartPeriod), conv(h.StartInterval)
	if h.Retries != nil {
		r := int(*h.Retries)
		out.Retries = &r
	}
	if len(out.Test) > 0 && out.Test[0] == "NONE" {
		out.Disable = true
	}
	return out
}

func dependsOn(d types.DependsOnConfig) map[string]spec.Dependency {
	if len(d) == 0 {
		return nil
	}
	out := make(map[string]spec.Dependency, len(d))
	for name, dep := range d {
		sd := spec.Dependency{Condition: dep.Condition, Restart: dep.Restart}
		if sd.Condition == "" {
			sd.Condition = spec.ConditionStarted
		}
		if !dep.Required {
			f := false
			sd.Required = &f
		}
		out[name] = sd
	}
	return out
}

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

func (t *translator) hooks(s types.ServiceConfig) *spec.Hooks {
	if len(s.PostStart) == 0 && len(s.PreStop) == 0 {
		return nil
	}
	conv := func(hs []types.ServiceHook) []spec.Hook {
		var out []spec.Hook
		for _, h := range hs {
			out = append(out, spec.Hook{
				Command: h.Command, User: h.User, WorkingDir: h.WorkingDir,
				Env: environment(h.Environment), Privileged: h.Privileged,
			})
		}
		return out
	}
	return &spec.Hooks{PostStart: conv(s.PostStart), PreStop: conv(s.PreStop)}
}

func mergeHooks(a *spec.Hooks, b spec.Hooks) *spec.Hooks {
	if a == nil {
		return &b
	}
	out := spec.DeepCopy(*a)
	out.PostCreate = append(out.PostCreate, b.PostCreate...)
	out.PostStart = append(out.PostStart, b.PostStart...)
	out.PostAttach = append(out.PostAttach, b.PostAttach...)
	out.PreStop = append(out.PreStop, b.PreStop...)
	return &out
}

func (t *translator) network(key string, n types.NetworkConfig) spec.Network {
	out := spec.Network{
		Name: n.Name, Driver: n.Driver, DriverOpts: nonEmptyMap(n.DriverOpts),
		External: bool(n.External), Internal: n.Internal, Attachable: n.Attachable,
		Labels: nonEmptyMap(n.Labels),
	}
	if n.EnableIPv6 != nil {
		out.IPv6 = *n.EnableIPv6
	}
	if n.EnableIPv4 != nil && !*n.EnableIPv4 {
		t.warn("", "networks."+key+".enable_ipv4", "IPv6-only networks are not supported; IPv4 stays enabled")
	}
	if n.Ipam.Driver != "" && n.Ipam.Driver != "default" {
		t.warn("", "networks."+key+".ipam.driver", "IPAM drivers are not supported; the default allocator is used")
	}
	if len(n.Ipam.Options) > 0 {
		t.warn("", "networks."+key+".ipam.options", "IPAM options are not supported; ignored")
	}
	for i, pool := range n.Ipam.Config {
		out.Subnets = append(out.Subnets, spec.Subnet{Subnet: pool.Subnet, Gateway: pool.Gateway, IPRange: pool.IPRange})
		if len(pool.AuxiliaryAddresses) > 0 {
			t.warn("", fmt.Sprintf("networks.%s.ipam.config[%d].aux_addresses", key, i), "auxiliary addresses are not supported; ignored")
		}
	}
	return out
}

func (t *translator) volume(v types.VolumeConfig) spec.Volume {
	return spec.Volume{
		Name: v.Name, Driver: v.Driver, DriverOpts: nonEmptyMap(v.DriverOpts),
		External: bool(v.External), Labels: nonEmptyMap(v.Labels),
	}
}

// SortWarnings orders warnings by service then field, for stable output.
func SortWarnings(ws []spec.Warning) {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].Service != ws[j].Service {
			return ws[i].Service < ws[j].Service
		}
		return ws[i].Field < ws[j].Field
	})
}
