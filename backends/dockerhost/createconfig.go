package dockerhost

import (
	"fmt"
	"maps"
	"math"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/docker/go-units"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// createRequest is everything Create sends: the create body, then the
// networks to connect before returning (API 1.41 takes one endpoint at
// create).
type createRequest struct {
	Config     *container.Config
	HostConfig *container.HostConfig
	Networking *network.NetworkingConfig
	Platform   *ocispec.Platform
	// Connect are the networks (runtime name → endpoint) beyond the first.
	Connect []namedEndpoint
	// ClearCmd: the spec clears the command but keeps the image's
	// entrypoint, which Docker can only do with the entrypoint spelled out.
	ClearCmd bool
}

type namedEndpoint struct {
	Name     string
	Endpoint *network.EndpointSettings
}

// buildCreate maps a ContainerSpec onto Docker's create request for the
// negotiated API version. It does no I/O.
func buildCreate(cs backends.ContainerSpec, api string) (createRequest, error) {
	a := cs.App
	caps := capabilitiesFor(api)
	supported := func(path string) bool { _, gap := caps.Gap(path); return !gap }

	cfg := &container.Config{
		Image:      a.Image,
		Hostname:   a.Hostname,
		Domainname: a.Domainname,
		User:       a.User,
		WorkingDir: a.WorkingDir,
		Tty:        a.TTY,
		OpenStdin:  a.StdinOpen,
		StdinOnce:  cs.StdinOnce,
		StopSignal: a.StopSignal,
		Env:        envList(a.Env),
		Labels:     mergeLabels(a.Labels, cs.Labels),
	}
	hc := &container.HostConfig{
		GroupAdd:       slices.Clone(a.GroupAdd),
		Init:           a.Init,
		ReadonlyRootfs: a.ReadOnly,
		Privileged:     a.Privileged,
		CapAdd:         slices.Clone(a.CapAdd),
		CapDrop:        slices.Clone(a.CapDrop),
		SecurityOpt:    slices.Clone(a.SecurityOpt),
		Sysctls:        maps.Clone(a.Sysctls),
		ShmSize:        int64(a.ShmSize),
		DNSSearch:      slices.Clone(a.DNSSearch),
		DNSOptions:     slices.Clone(a.DNSOptions),
		ExtraHosts:     extraHosts(a.ExtraHosts),
		PidMode:        container.PidMode(a.PidMode),
		IpcMode:        container.IpcMode(a.IpcMode),
		UTSMode:        container.UTSMode(a.UTSMode),
		UsernsMode:     container.UsernsMode(a.UsernsMode),
		CgroupnsMode:   container.CgroupnsMode(a.CgroupnsMode),
	}
	hc.DeviceCgroupRules = slices.Clone(a.DeviceCgroupRules)
	// systempaths=unconfined is a docker CLI option: the Engine API says it
	// with empty masked and read-only path lists.
	if i := slices.Index(hc.SecurityOpt, "systempaths=unconfined"); i >= 0 {
		hc.SecurityOpt = slices.Delete(hc.SecurityOpt, i, i+1)
		hc.MaskedPaths, hc.ReadonlyPaths = []string{}, []string{}
	}
	req := createRequest{Config: cfg, HostConfig: hc}

	// Command and entrypoint: nil keeps the image's; empty clears it.
	switch {
	case a.Entrypoint == nil:
	case len(a.Entrypoint) == 0:
		cfg.Entrypoint = []string{""}
	default:
		cfg.Entrypoint = slices.Clone([]string(a.Entrypoint))
	}
	switch {
	case a.Command == nil:
	case len(a.Command) == 0:
		cfg.Cmd = []string{}
		req.ClearCmd = a.Entrypoint == nil
	default:
		cfg.Cmd = slices.Clone([]string(a.Command))
	}

	if a.StopGracePeriod != nil {
		secs := int(math.Ceil(a.StopGracePeriod.Std().Seconds()))
		cfg.StopTimeout = &secs
	}

	for _, s := range a.DNS {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return req, invalid("dns: %q is not an IP address", s)
		}
		hc.DNS = append(hc.DNS, ip)
	}

	for _, mode := range []struct{ path, v string }{{"pidMode", a.PidMode}, {"ipcMode", a.IpcMode}, {"networkMode", a.NetworkMode}} {
		if strings.HasPrefix(mode.v, "service:") {
			return req, invalid("%s: %q must be rewritten to container:ID before it reaches the backend", mode.path, mode.v)
		}
	}

	if err := mapRestart(a.Restart, hc); err != nil {
		return req, err
	}
	if err := mapPorts(a, cfg, hc); err != nil {
		return req, err
	}
	if err := mapNetworks(cs, &req); err != nil {
		return req, err
	}
	if err := mapMounts(cs, hc, supported("volumes.subpath")); err != nil {
		return req, err
	}
	mapHealthcheck(a.Healthcheck, cfg, supported("healthcheck.startInterval"))
	mapResources(a.Resources, hc)
	if err := mapDevices(a.Devices, hc); err != nil {
		return req, err
	}
	for _, name := range slices.Sorted(maps.Keys(a.Ulimits)) {
		u := a.Ulimits[name]
		hc.Ulimits = append(hc.Ulimits, &units.Ulimit{Name: name, Soft: u.Soft, Hard: u.Hard})
	}
	if a.Logging != nil {
		hc.LogConfig = container.LogConfig{Type: a.Logging.Driver, Config: maps.Clone(a.Logging.Options)}
	}
	if a.Platform != "" {
		p, err := parsePlatform(a.Platform)
		if err != nil {
			return req, err
		}
		req.Platform = &p
	}
	return req, nil
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// mergeLabels returns the app's labels overlaid with the engine's
// identity labels (which win).
func mergeLabels(app, identity map[string]string) map[string]string {
	out := make(map[string]string, len(app)+len(identity))
	maps.Copy(out, app)
	maps.Copy(out, identity)
	return out
}

// extraHosts renders host → IPs as Docker's "host:ip" entries, sorted.
func extraHosts(m map[string][]string) []string {
	var out []string
	for _, host := range slices.Sorted(maps.Keys(m)) {
		for _, ip := range m[host] {
			out = append(out, host+":"+ip)
		}
	}
	return out
}

func mapRestart(policy string, hc *container.HostConfig) error {
	name, count, hasCount := strings.Cut(policy, ":")
	switch name {
	case "", "no":
		hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyDisabled}
	case "always":
		hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyAlways}
	case "unless-stopped":
		hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyUnlessStopped}
	case "on-failure":
		hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyOnFailure}
		if hasCount {
			n, err := strconv.Atoi(count)
			if err != nil || n < 0 {
				return invalid("restart: %q: the retry count must be a non-negative number", policy)
			}
			hc.RestartPolicy.MaximumRetryCount = n
		}
		return nil
	default:
		return invalid("restart: %q is not one of no, always, on-failure[:N], unless-stopped", policy)
	}
	if hasCount {
		return invalid("restart: %q: only on-failure takes a retry count", policy)
	}
	return nil
}

func mapPorts(a spec.App, cfg *container.Config, hc *container.HostConfig) error {
	exposed := network.PortSet{}
	for i, p := range a.Ports {
		port, ok := network.PortFrom(uint16(p.Container), network.IPProtocol(p.Proto()))
		if !ok || p.Container <= 0 || p.Container > 65535 {
			return invalid("ports[%d].container: %d is not a port", i, p.Container)
		}
		b := network.PortBinding{}
		if p.HostIP != "" {
			ip, err := netip.ParseAddr(p.HostIP)
			if err != nil {
				return invalid("ports[%d].hostIP: %q is not an IP address", i, p.HostIP)
			}
			b.HostIP = ip
		}
		switch {
		case p.Host == 0:
		case p.HostEnd > p.Host:
			b.HostPort = fmt.Sprintf("%d-%d", p.Host, p.HostEnd)
		default:
			b.HostPort = strconv.Itoa(p.Host)
		}
		if hc.PortBindings == nil {
			hc.PortBindings = network.PortMap{}
		}
		hc.PortBindings[port] = append(hc.PortBindings[port], b)
		exposed[port] = struct{}{}
	}
	for i, e := range a.Expose {
		r, err := network.ParsePortRange(e)
		if err != nil {
			return invalid("expose[%d]: %q: %v", i, e, err)
		}
		for p := range r.All() {
			exposed[p] = struct{}{}
		}
	}
	if len(exposed) > 0 {
		cfg.ExposedPorts = exposed
	}
	return nil
}

// runtimeNetwork is a project network's runtime name.
func runtimeNetwork(cs backends.ContainerSpec, key string) string {
	if n, ok := cs.Networks[key]; ok {
		if n.Name != "" {
			return n.Name
		}
		if cs.Project != "" {
			return cs.Project + "_" + key
		}
	}
	return key
}

// runtimeVolume is a named volume's runtime name: the project's volume,
// else the source itself.
func runtimeVolume(cs backends.ContainerSpec, key string) string {
	if v, ok := cs.Volumes[key]; ok {
		if v.Name != "" {
			return v.Name
		}
		if cs.Project != "" {
			return cs.Project + "_" + key
		}
	}
	return key
}

func mapNetworks(cs backends.ContainerSpec, req *createRequest) error {
	a := cs.App
	hc := req.HostConfig
	if a.NetworkMode != "" {
		hc.NetworkMode = container.NetworkMode(a.NetworkMode)
		if len(a.Networks) > 0 {
			return invalid("networks: an app with networkMode %q cannot join networks", a.NetworkMode)
		}
		return nil
	}
	for i, att := range a.Networks {
		ep := &network.EndpointSettings{Aliases: aliases(a.Name, att.Aliases)}
		if att.IPv4 != "" || att.IPv6 != "" {
			ep.IPAMConfig = &network.EndpointIPAMConfig{}
			if att.IPv4 != "" {
				ip, err := netip.ParseAddr(att.IPv4)
				if err != nil || !ip.Is4() {
					return invalid("networks[%d].ipv4: %q is not an IPv4 address", i, att.IPv4)
				}
				ep.IPAMConfig.IPv4Address = ip
			}
			if att.IPv6 != "" {
				ip, err := netip.ParseAddr(att.IPv6)
				if err != nil || !ip.Is6() {
					return invalid("networks[%d].ipv6: %q is not an IPv6 address", i, att.IPv6)
				}
				ep.IPAMConfig.IPv6Address = ip
			}
		}
		name := runtimeNetwork(cs, att.Name)
		if i == 0 {
			hc.NetworkMode = container.NetworkMode(name)
			req.Networking = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{name: ep}}
			continue
		}
		req.Connect = append(req.Connect, namedEndpoint{Name: name, Endpoint: ep})
	}
	return nil
}

func aliases(app string, extra []string) []string {
	var out []string
	if app != "" {
		out = append(out, app)
	}
	for _, a := range extra {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func mapMounts(cs backends.ContainerSpec, hc *container.HostConfig, subpath bool) error {
	a := cs.App
	for i, m := range a.Mounts {
		if m.Source == "" || m.Target == "" {
			return invalid("mounts[%d]: source and target are required", i)
		}
		prop := mount.Propagation(m.Propagation)
		if prop != "" && !slices.Contains(mount.Propagations, prop) {
			return invalid("mounts[%d].propagation: %q is not one of %v", i, m.Propagation, mount.Propagations)
		}
		if m.CreateHostPath {
			// Mount.BindOptions.CreateMountpoint needs API 1.42; the
			// legacy Binds syntax creates a missing source everywhere.
			var opts []string
			if m.ReadOnly {
				opts = append(opts, "ro")
			}
			if prop != "" {
				opts = append(opts, string(prop))
			}
			bind := m.Source + ":" + m.Target
			if len(opts) > 0 {
				bind += ":" + strings.Join(opts, ",")
			}
			hc.Binds = append(hc.Binds, bind)
			continue
		}
		mt := mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly}
		if prop != "" {
			mt.BindOptions = &mount.BindOptions{Propagation: prop}
		}
		hc.Mounts = append(hc.Mounts, mt)
	}
	for i, v := range a.Volumes {
		if v.Target == "" {
			return invalid("volumes[%d].target: required", i)
		}
		mt := mount.Mount{Type: mount.TypeVolume, Target: v.Target, ReadOnly: v.ReadOnly}
		opts := &mount.VolumeOptions{NoCopy: v.NoCopy}
		if subpath {
			opts.Subpath = v.Subpath
		}
		_, declared := cs.Volumes[v.Source]
		if v.Source != "" {
			mt.Source = runtimeVolume(cs, v.Source)
		}
		if (v.Driver != "" || len(v.DriverOpts) > 0) && !declared {
			driver := v.Driver
			if driver == "" {
				driver = "local" // options alone mean the default driver's
			}
			opts.DriverConfig = &mount.Driver{Name: driver, Options: maps.Clone(v.DriverOpts)}
		}
		if opts.NoCopy || opts.Subpath != "" || opts.DriverConfig != nil {
			mt.VolumeOptions = opts
		}
		hc.Mounts = append(hc.Mounts, mt)
	}
	for i, t := range a.Tmpfs {
		if t.Target == "" {
			return invalid("tmpfs[%d].target: required", i)
		}
		mt := mount.Mount{Type: mount.TypeTmpfs, Target: t.Target}
		if t.Size != 0 || t.Mode != 0 {
			mt.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: int64(t.Size), Mode: os.FileMode(t.Mode)}
		}
		hc.Mounts = append(hc.Mounts, mt)
	}
	return nil
}

func mapHealthcheck(h *spec.Healthcheck, cfg *container.Config, startInterval bool) {
	if h == nil {
		return
	}
	if h.Disable {
		cfg.Healthcheck = &container.HealthConfig{Test: []string{"NONE"}}
		return
	}
	hc := &container.HealthConfig{Test: slices.Clone(h.Test)}
	if h.Interval != nil {
		hc.Interval = h.Interval.Std()
	}
	if h.Timeout != nil {
		hc.Timeout = h.Timeout.Std()
	}
	if h.StartPeriod != nil {
		hc.StartPeriod = h.StartPeriod.Std()
	}
	if h.StartInterval != nil && startInterval {
		hc.StartInterval = h.StartInterval.Std()
	}
	if h.Retries != nil {
		hc.Retries = *h.Retries
	}
	cfg.Healthcheck = hc
}

func mapResources(r *spec.Resources, hc *container.HostConfig) {
	if r == nil {
		return
	}
	if l := r.Limits; l != nil {
		hc.NanoCPUs = int64(math.Round(l.CPUs * 1e9))
		hc.Memory = int64(l.Memory)
		if l.Pids != 0 {
			pids := l.Pids
			hc.PidsLimit = &pids
		}
	}
	if res := r.Reservations; res != nil {
		hc.MemoryReservation = int64(res.Memory)
	}
}

func mapDevices(devs []spec.Device, hc *container.HostConfig) error {
	for i, d := range devs {
		if d.Source == "" {
			return invalid("devices[%d].source: required", i)
		}
		dm := container.DeviceMapping{PathOnHost: d.Source, PathInContainer: d.Target, CgroupPermissions: d.Permissions}
		if dm.PathInContainer == "" {
			dm.PathInContainer = d.Source
		}
		if dm.CgroupPermissions == "" {
			dm.CgroupPermissions = "rwm"
		}
		hc.Devices = append(hc.Devices, dm)
	}
	return nil
}

func parsePlatform(s string) (ocispec.Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return ocispec.Platform{}, invalid("platform: %q is not os/arch[/variant]", s)
	}
	p := ocispec.Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// sortedNames returns a map's keys sorted (for deterministic output).
func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
