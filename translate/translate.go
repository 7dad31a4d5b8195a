package translate

import (
	"fmt"
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
	a.Credentials, a.Docker = t.credentials(s), compose.ServiceDocker(s.Extensions)
	t.build(s, &a)
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
	a.Watch = watchRules(s.Develop)
	if d := compose.Devcontainer(s.Extensions); d != nil {
		dc := spec.DeepCopy(d.Devcontainer)
		a.Devcontainer = &dc
		t.devcontainerStages(s.Name, d, &a)
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

// watchRules are develop.watch's rules (their paths absolute already:
// the loader resolves them against the project directory).
func watchRules(d *types.DevelopConfig) []spec.WatchRule {
	if d == nil {
		return nil
	}
	var out []spec.WatchRule
	for _, w := range d.Watch {
		r := spec.WatchRule{Path: w.Path, Action: string(w.Action), Target: w.Target, Ignore: w.Ignore, Include: w.Include, InitialSync: w.InitialSync}
		if len(w.Exec.Command) > 0 {
			r.Exec = &spec.Hook{Command: w.Exec.Command, User: w.Exec.User, WorkingDir: w.Exec.WorkingDir,
				Env: environment(w.Exec.Environment), Privileged: w.Exec.Privileged}
		}
		out = append(out, r)
	}
	return out
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
