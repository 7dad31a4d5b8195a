package createbody

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Input is an Engine create request plus what the proxy resolved: the
// container name and the runtime networks the request names.
type Input struct {
	Req  container.CreateRequest
	Name string
	// Networks maps each network name or ID the request uses to the
	// network's runtime name.
	Networks map[string]string
}

// ToApp reads an Engine create request into an app and the rest of what
// backends.Resolve needs. What the spec cannot carry is returned as
// warnings (the Engine's create response carries them to the client),
// never dropped silently.
func ToApp(in Input) (backends.ResolveInput, []string, error) {
	cfg := in.Req.Config
	hc := in.Req.HostConfig
	if cfg == nil || cfg.Image == "" {
		return backends.ResolveInput{}, nil, invalid("Config cannot be empty in order to create a container")
	}
	if hc == nil {
		hc = &container.HostConfig{}
	}
	var warns []string
	warn := func(format string, args ...any) { warns = append(warns, fmt.Sprintf(format, args...)) }
	labels := maps.Clone(cfg.Labels)
	if labels == nil {
		labels = map[string]string{}
	}

	a, err := appOf(in.Name, cfg, hc)
	if err != nil {
		return backends.ResolveInput{}, warns, err
	}
	if svc := labels["com.docker.compose.service"]; svc != "" {
		a.Name = svc
	}
	// The docker CLI sends --security-opt systempaths=unconfined as empty
	// path lists; the spec (and so the host policy) says it as the option.
	if hc.MaskedPaths != nil || hc.ReadonlyPaths != nil {
		if len(hc.MaskedPaths) > 0 || len(hc.ReadonlyPaths) > 0 {
			warn("HostConfig.MaskedPaths/ReadonlyPaths: custom lists are not supported by cornus; the runtime's defaults were kept")
		} else {
			a.SecurityOpt = append(a.SecurityOpt, "systempaths=unconfined")
		}
	}
	readResources(&a, hc.Resources)
	ports, err := readPorts(cfg, hc)
	if err != nil {
		return backends.ResolveInput{}, warns, err
	}
	a.Ports = ports
	for p := range cfg.ExposedPorts {
		a.Expose = append(a.Expose, p.String())
	}
	slices.Sort(a.Expose)
	vols := map[string]spec.Volume{}
	if err := readStorage(&a, cfg, hc, vols); err != nil {
		return backends.ResolveInput{}, warns, err
	}
	nets, err := readNetworks(&a, cfg, hc, in.Req.NetworkingConfig, in.Networks)
	if err != nil {
		return backends.ResolveInput{}, warns, err
	}
	for _, name := range unsupportedHostConfig(hc) {
		warn("HostConfig.%s is not supported by cornus and was ignored", name)
	}

	ri := backends.ResolveInput{
		App: a, Name: in.Name, Replica: 1, Labels: identityLabels(labels), Networks: nets, Volumes: vols,
		StdinOnce: cfg.StdinOnce,
	}
	ri.Project = ri.Labels[backends.LabelProject]
	if n, err := strconv.Atoi(labels["com.docker.compose.container-number"]); err == nil && n > 0 {
		ri.Replica = n
	}
	return ri, warns, nil
}

// appOf reads the fields of a create request that map one to one onto an
// app.
func appOf(name string, cfg *container.Config, hc *container.HostConfig) (spec.App, error) {
	a := spec.App{
		Name:              name,
		Image:             cfg.Image,
		Hostname:          cfg.Hostname,
		Domainname:        cfg.Domainname,
		User:              cfg.User,
		WorkingDir:        cfg.WorkingDir,
		TTY:               cfg.Tty,
		StdinOpen:         cfg.OpenStdin,
		StopSignal:        cfg.StopSignal,
		Labels:            maps.Clone(cfg.Labels),
		Env:               readEnv(cfg.Env),
		Privileged:        hc.Privileged,
		ReadOnly:          hc.ReadonlyRootfs,
		CapAdd:            slices.Clone(hc.CapAdd),
		CapDrop:           slices.Clone(hc.CapDrop),
		SecurityOpt:       slices.Clone(hc.SecurityOpt),
		GroupAdd:          slices.Clone(hc.GroupAdd),
		DNSOptions:        slices.Clone(hc.DNSOptions),
		DNSSearch:         slices.Clone(hc.DNSSearch),
		Sysctls:           maps.Clone(hc.Sysctls),
		ShmSize:           spec.Bytes(hc.ShmSize),
		Init:              hc.Init,
		PidMode:           string(hc.PidMode),
		IpcMode:           ipcMode(hc.IpcMode),
		UTSMode:           string(hc.UTSMode),
		UsernsMode:        string(hc.UsernsMode),
		CgroupnsMode:      string(hc.CgroupnsMode),
		DeviceCgroupRules: slices.Clone(hc.DeviceCgroupRules),
		Restart:           restartOf(hc.RestartPolicy),
	}
	if cfg.Entrypoint != nil {
		a.Entrypoint = command(cfg.Entrypoint)
	}
	if cfg.Cmd != nil {
		a.Command = command(cfg.Cmd)
	}
	if cfg.StopTimeout != nil {
		a.StopGracePeriod = spec.DurationOf(time.Duration(*cfg.StopTimeout) * time.Second)
	}
	if cfg.Healthcheck != nil {
		a.Healthcheck = healthcheck(cfg.Healthcheck)
	}
	for _, d := range hc.DNS {
		a.DNS = append(a.DNS, d.String())
	}
	if hc.LogConfig.Type != "" {
		a.Logging = &spec.Logging{Driver: hc.LogConfig.Type, Options: maps.Clone(hc.LogConfig.Config)}
	}
	hosts, err := readExtraHosts(hc.ExtraHosts)
	a.ExtraHosts = hosts
	return a, err
}

// readEnv reads Config.Env; a "KEY" alone unsets KEY in the Engine, so it
// is left out.
func readEnv(env []string) map[string]string {
	if len(env) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// readExtraHosts reads HostConfig.ExtraHosts, HOST:IP each.
func readExtraHosts(hosts []string) (map[string][]string, error) {
	var out map[string][]string
	for _, h := range hosts {
		host, ip, ok := strings.Cut(h, ":")
		if !ok {
			return nil, invalid("invalid extra host %q: expected HOST:IP", h)
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[host] = append(out[host], ip)
	}
	return out, nil
}

// restartOf writes an Engine restart policy in Compose's form.
func restartOf(rp container.RestartPolicy) string {
	if rp.Name == "" || rp.Name == "no" {
		return ""
	}
	r := string(rp.Name)
	if rp.Name == "on-failure" && rp.MaximumRetryCount > 0 {
		r += ":" + strconv.Itoa(rp.MaximumRetryCount)
	}
	return r
}

// unsupportedHostConfig names the HostConfig fields a request sets that
// cornus does not carry.
func unsupportedHostConfig(hc *container.HostConfig) []string {
	var names []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"VolumesFrom", len(hc.VolumesFrom) > 0}, {"Links", len(hc.Links) > 0}, {"CpuShares", hc.CPUShares != 0},
		{"CpuQuota", hc.CPUQuota != 0}, {"CpusetCpus", hc.CpusetCpus != ""}, {"BlkioWeight", hc.BlkioWeight != 0},
		{"DeviceRequests", len(hc.DeviceRequests) > 0}, {"OomScoreAdj", hc.OomScoreAdj != 0},
		{"CgroupParent", hc.CgroupParent != ""}, {"Runtime", hc.Runtime != "" && hc.Runtime != "runc"},
		{"StorageOpt", len(hc.StorageOpt) > 0}, {"MemorySwap", hc.MemorySwap > 0},
		{"VolumeDriver", hc.VolumeDriver != ""}, {"Cgroup", hc.Cgroup != ""}, {"CpuPeriod", hc.CPUPeriod != 0},
		{"CpuRealtimePeriod", hc.CPURealtimePeriod != 0}, {"CpuRealtimeRuntime", hc.CPURealtimeRuntime != 0},
		{"CpusetMems", hc.CpusetMems != ""}, {"MemorySwappiness", hc.MemorySwappiness != nil},
		{"CpuCount", hc.CPUCount != 0}, {"CpuPercent", hc.CPUPercent != 0}, {"IOMaximumIOps", hc.IOMaximumIOps != 0},
		{"IOMaximumBandwidth", hc.IOMaximumBandwidth != 0}, {"BlkioWeightDevice", len(hc.BlkioWeightDevice) > 0},
		{"BlkioDeviceReadBps", len(hc.BlkioDeviceReadBps) > 0}, {"BlkioDeviceWriteBps", len(hc.BlkioDeviceWriteBps) > 0},
		{"BlkioDeviceReadIOps", len(hc.BlkioDeviceReadIOps) > 0}, {"BlkioDeviceWriteIOps", len(hc.BlkioDeviceWriteIOps) > 0},
		{"Umask", hc.Umask != nil},
	} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}

// identityLabels adds cornus's labels to containers docker compose creates
// through the API, so `cornus compose ps` and docker compose see the same
// project.
func identityLabels(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if p := labels[backends.ComposeProject]; p != "" {
		out[backends.LabelProject] = p
		out[backends.LabelApp] = labels[backends.ComposeService]
		out[backends.LabelReplica] = labels[backends.ComposeNumber]
		if strings.EqualFold(labels[backends.ComposeOneoff], "true") {
			out[backends.LabelOneoff] = "true"
		}
	}
	return out
}

// command maps an Engine argv: [""] clears the image default.
func command(argv []string) spec.Command {
	if len(argv) == 1 && argv[0] == "" {
		return spec.Command{}
	}
	return spec.Command(slices.Clone(argv))
}

func ipcMode(m container.IpcMode) string {
	switch m {
	case "", "private", "shareable":
		return "" // the runtime default
	}
	return string(m)
}

func healthcheck(h *container.HealthConfig) *spec.Healthcheck {
	out := &spec.Healthcheck{Test: slices.Clone(h.Test)}
	if len(h.Test) == 1 && h.Test[0] == "NONE" {
		out.Disable = true
	}
	dur := func(d time.Duration) *spec.Duration {
		if d == 0 {
			return nil
		}
		return spec.DurationOf(d)
	}
	out.Interval, out.Timeout = dur(h.Interval), dur(h.Timeout)
	out.StartPeriod, out.StartInterval = dur(h.StartPeriod), dur(h.StartInterval)
	if h.Retries != 0 {
		r := h.Retries
		out.Retries = &r
	}
	return out
}

func readResources(a *spec.App, r container.Resources) {
	var limits, reservations spec.ResourceLimits
	limits.Memory = spec.Bytes(r.Memory)
	limits.CPUs = float64(r.NanoCPUs) / 1e9
	if r.PidsLimit != nil && *r.PidsLimit > 0 {
		limits.Pids = *r.PidsLimit
	}
	reservations.Memory = spec.Bytes(r.MemoryReservation)
	if limits != (spec.ResourceLimits{}) || reservations != (spec.ResourceLimits{}) {
		a.Resources = &spec.Resources{}
		if limits != (spec.ResourceLimits{}) {
			a.Resources.Limits = &limits
		}
		if reservations != (spec.ResourceLimits{}) {
			a.Resources.Reservations = &reservations
		}
	}
	for _, d := range r.Devices {
		a.Devices = append(a.Devices, spec.Device{Source: d.PathOnHost, Target: d.PathInContainer, Permissions: d.CgroupPermissions})
	}
	for _, u := range r.Ulimits {
		if a.Ulimits == nil {
			a.Ulimits = map[string]spec.Ulimit{}
		}
		a.Ulimits[u.Name] = spec.Ulimit{Soft: u.Soft, Hard: u.Hard}
	}
}

// mapPorts turns PortBindings (and PublishAllPorts over ExposedPorts) into
// published ports.
func readPorts(cfg *container.Config, hc *container.HostConfig) ([]spec.Port, error) {
	var out []spec.Port
	bound := map[network.Port]bool{}
	keys := slices.SortedFunc(maps.Keys(hc.PortBindings), func(a, b network.Port) int { return strings.Compare(a.String(), b.String()) })
	for _, p := range keys {
		bound[p] = true
		for _, b := range hc.PortBindings[p] {
			sp := spec.Port{Container: int(p.Num()), Protocol: string(p.Proto())}
			if b.HostIP.IsValid() && !b.HostIP.IsUnspecified() {
				sp.HostIP = b.HostIP.String()
			}
			if b.HostPort != "" {
				lo, hi, isRange := strings.Cut(b.HostPort, "-")
				n, err := strconv.Atoi(lo)
				if err != nil || n < 0 || n > 65535 {
					return nil, invalid("invalid host port %q for %s", b.HostPort, p)
				}
				sp.Host = n
				if isRange {
					if sp.HostEnd, err = strconv.Atoi(hi); err != nil || sp.HostEnd < n {
						return nil, invalid("invalid host port range %q for %s", b.HostPort, p)
					}
				}
			}
			out = append(out, sp)
		}
	}
	if hc.PublishAllPorts {
		for p := range cfg.ExposedPorts {
			if !bound[p] {
				out = append(out, spec.Port{Container: int(p.Num()), Protocol: string(p.Proto())})
			}
		}
	}
	return out, nil
}

// readNetworks turns NetworkMode and EndpointsConfig into attachments; the
// returned map holds the runtime networks keyed as the attachments name them.
func readNetworks(a *spec.App, cfg *container.Config, hc *container.HostConfig, nc *network.NetworkingConfig, known map[string]string) (map[string]spec.Network, error) {
	mode := string(hc.NetworkMode)
	if cfg.NetworkDisabled {
		mode = "none"
	}
	switch {
	case mode == "" || mode == "default":
		mode = "bridge"
	case mode == "host" || mode == "none" || mode == "bridge" || strings.HasPrefix(mode, "container:"):
	default:
		mode = "" // a named network: attach below
	}
	endpoints := map[string]*network.EndpointSettings{}
	if nc != nil {
		maps.Copy(endpoints, nc.EndpointsConfig)
	}
	if ep, ok := endpoints["default"]; ok { // the docker CLI's name for bridge
		delete(endpoints, "default")
		endpoints["bridge"] = ep
	}
	if mode == "" {
		if _, ok := endpoints[string(hc.NetworkMode)]; !ok {
			endpoints[string(hc.NetworkMode)] = nil
		}
	} else {
		delete(endpoints, mode)
		switch {
		case mode != "bridge" && len(endpoints) > 0:
			return nil, invalid("conflicting options: network mode %s cannot be combined with other networks", mode)
		case mode != "bridge" || len(endpoints) == 0:
			// host, none and container:X are honored as asked (the host
			// policy decides about host); never turned into a bridge.
			a.NetworkMode = mode
			return nil, nil
		}
		endpoints["bridge"] = nil
	}
	nets := map[string]spec.Network{}
	for _, ref := range slices.Sorted(maps.Keys(endpoints)) {
		name, ok := known[ref]
		if !ok {
			return nil, fmt.Errorf("network %s not found: %w", ref, errdefs.ErrNotFound)
		}
		att := spec.NetworkAttachment{Name: name}
		if ep := endpoints[ref]; ep != nil {
			att.Aliases = slices.Clone(ep.Aliases)
			if ep.IPAMConfig != nil {
				if ep.IPAMConfig.IPv4Address.IsValid() {
					att.IPv4 = ep.IPAMConfig.IPv4Address.String()
				}
				if ep.IPAMConfig.IPv6Address.IsValid() {
					att.IPv6 = ep.IPAMConfig.IPv6Address.String()
				}
			}
		}
		a.Networks = append(a.Networks, att)
		nets[name] = spec.Network{Name: name, External: true}
	}
	return nets, nil
}
