package createbody

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/docker/go-units"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Request is everything the dockerhost backend sends to create a
// container: the create body, then the networks to connect before
// returning (API 1.41 takes one endpoint at create).
type Request struct {
	Config     *container.Config
	HostConfig *container.HostConfig
	Networking *network.NetworkingConfig
	Platform   *ocispec.Platform
	// Connect are the networks (runtime name → endpoint) beyond the first.
	Connect []NamedEndpoint
	// ClearCmd: the spec clears the command but keeps the image's
	// entrypoint, which Docker can only do with the entrypoint spelled out
	// (the caller fills it in from the image).
	ClearCmd bool
}

// NamedEndpoint is a network to connect, by runtime name.
type NamedEndpoint struct {
	Name     string
	Endpoint *network.EndpointSettings
}

// Options are what the negotiated Engine API version allows.
type Options struct {
	StartInterval bool // HealthConfig.StartInterval (API 1.44)
	Subpath       bool // VolumeOptions.Subpath (API 1.45)
}

// FromSpec maps a resolved ContainerSpec onto Docker's create request. It
// does no I/O.
func FromSpec(cs backends.ContainerSpec, o Options) (Request, error) {
	cfg := &container.Config{
		Image: cs.Image, Hostname: cs.Hostname, Domainname: cs.Domainname, User: cs.User, WorkingDir: cs.WorkingDir,
		Tty: cs.TTY, OpenStdin: cs.StdinOpen, StdinOnce: cs.StdinOnce, StopSignal: cs.StopSignal.String(),
		Env: slices.Clone(cs.Env), Labels: maps.Clone(cs.Labels),
	}
	hc := &container.HostConfig{
		GroupAdd: slices.Clone(cs.GroupAdd), ReadonlyRootfs: cs.ReadOnly, Privileged: cs.Privileged,
		CapAdd: slices.Clone(cs.CapAdd), CapDrop: slices.Clone(cs.CapDrop), SecurityOpt: cs.Security.DockerOpts(),
		Sysctls: maps.Clone(cs.Sysctls), ShmSize: cs.ShmSize, DNSSearch: slices.Clone(cs.DNSSearch), DNSOptions: slices.Clone(cs.DNSOptions),
		PidMode: container.PidMode(nsMode(cs.PID)), IpcMode: container.IpcMode(nsMode(cs.IPC)), UTSMode: container.UTSMode(nsMode(cs.UTS)),
		UsernsMode: container.UsernsMode(nsMode(cs.UserNS)), CgroupnsMode: container.CgroupnsMode(nsMode(cs.Cgroup)),
		RestartPolicy: RestartPolicy(cs.Restart),
	}
	if cs.Init {
		init := true
		hc.Init = &init
	}
	hc.DeviceCgroupRules = slices.Clone(cs.DeviceCgroupRules)
	if cs.Security.SystemPathsUnconfined {
		hc.MaskedPaths, hc.ReadonlyPaths = []string{}, []string{}
	}
	for _, h := range cs.ExtraHosts {
		hc.ExtraHosts = append(hc.ExtraHosts, h.Host+":"+h.IP)
	}
	req := Request{Config: cfg, HostConfig: hc}

	mapCommand(cs, &req)
	if cs.StopTimeout != nil {
		secs := int(math.Ceil(cs.StopTimeout.Seconds()))
		cfg.StopTimeout = &secs
	}
	for _, s := range cs.DNS {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return req, invalid("dns: %q is not an IP address", s)
		}
		hc.DNS = append(hc.DNS, ip)
	}
	if err := mapPorts(cs, cfg, hc); err != nil {
		return req, err
	}
	if err := mapNetworks(cs, &req); err != nil {
		return req, err
	}
	if err := mapMounts(cs, hc, o.Subpath); err != nil {
		return req, err
	}
	cfg.Healthcheck = healthConfig(cs.Healthcheck, o.StartInterval)
	mapResources(cs.Resources, hc)
	mapDevices(cs, hc)
	if cs.Logging != nil {
		hc.LogConfig = container.LogConfig{Type: cs.Logging.Driver, Config: maps.Clone(cs.Logging.Options)}
	}
	if p := cs.Platform; p != nil {
		req.Platform = &ocispec.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}
	}
	return req, nil
}

// mapCommand sets the command and entrypoint: nil keeps the image's; empty
// clears it.
func mapCommand(cs backends.ContainerSpec, req *Request) {
	switch {
	case cs.Entrypoint == nil:
	case len(cs.Entrypoint) == 0:
		req.Config.Entrypoint = []string{""}
	default:
		req.Config.Entrypoint = slices.Clone(cs.Entrypoint)
	}
	switch {
	case cs.Command == nil:
	case len(cs.Command) == 0:
		req.Config.Cmd = []string{}
		req.ClearCmd = cs.Entrypoint == nil
	default:
		req.Config.Cmd = slices.Clone(cs.Command)
	}
}

// mapDevices sets device mappings (the source path and rwm by default, as
// the docker CLI does) and ulimits.
func mapDevices(cs backends.ContainerSpec, hc *container.HostConfig) {
	for _, d := range cs.Devices {
		dm := container.DeviceMapping{PathOnHost: d.Source, PathInContainer: d.Target, CgroupPermissions: d.Permissions}
		if dm.PathInContainer == "" {
			dm.PathInContainer = d.Source
		}
		if dm.CgroupPermissions == "" {
			dm.CgroupPermissions = "rwm"
		}
		hc.Devices = append(hc.Devices, dm)
	}
	for _, u := range cs.Ulimits {
		hc.Ulimits = append(hc.Ulimits, &units.Ulimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
	}
}

// nsMode is a namespace mode in Docker's words.
func nsMode(m backends.NamespaceMode) string {
	if m.Kind == "container" {
		return "container:" + m.Container
	}
	return m.Kind
}

// RestartPolicy is Docker's form of a restart policy: the names are
// Docker's, "" is "no", and only on-failure carries a retry count.
func RestartPolicy(p spec.RestartPolicy) container.RestartPolicy {
	if p.Name != spec.RestartOnFailure {
		p.MaxRetries = 0
	}
	return container.RestartPolicy{Name: container.RestartPolicyMode(cmp.Or(p.Name, spec.RestartNo)), MaximumRetryCount: p.MaxRetries}
}

func mapPorts(cs backends.ContainerSpec, cfg *container.Config, hc *container.HostConfig) error {
	exposed := network.PortSet{}
	for i, p := range cs.Ports {
		port, ok := network.PortFrom(uint16(p.ContainerPort), network.IPProtocol(p.Protocol))
		if !ok || p.ContainerPort <= 0 || p.ContainerPort > 65535 {
			return invalid("ports[%d].container: %d is not a port", i, p.ContainerPort)
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
		case p.HostPort == 0:
		case p.HostPortEnd > p.HostPort:
			b.HostPort = fmt.Sprintf("%d-%d", p.HostPort, p.HostPortEnd)
		default:
			b.HostPort = strconv.Itoa(p.HostPort)
		}
		if hc.PortBindings == nil {
			hc.PortBindings = network.PortMap{}
		}
		hc.PortBindings[port] = append(hc.PortBindings[port], b)
		exposed[port] = struct{}{}
	}
	for _, e := range cs.Expose {
		if port, ok := network.PortFrom(uint16(e.Port), network.IPProtocol(e.Protocol)); ok {
			exposed[port] = struct{}{}
		}
	}
	if len(exposed) > 0 {
		cfg.ExposedPorts = exposed
	}
	return nil
}

func mapNetworks(cs backends.ContainerSpec, req *Request) error {
	hc := req.HostConfig
	if cs.Network.Kind != "" {
		hc.NetworkMode = container.NetworkMode(nsMode(backends.NamespaceMode(cs.Network)))
		return nil
	}
	for i, att := range cs.Networks {
		ep := &network.EndpointSettings{Aliases: slices.Clone(att.Aliases)}
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
		if i == 0 {
			hc.NetworkMode = container.NetworkMode(att.Network)
			req.Networking = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{att.Network: ep}}
			continue
		}
		req.Connect = append(req.Connect, NamedEndpoint{Name: att.Network, Endpoint: ep})
	}
	return nil
}

func mapMounts(cs backends.ContainerSpec, hc *container.HostConfig, subpath bool) error {
	for i, m := range cs.Binds {
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
			bind := m.Source + ":" + m.Target
			var opts []string
			if m.ReadOnly {
				opts = append(opts, "ro")
			}
			if prop != "" {
				opts = append(opts, string(prop))
			}
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
	for i, v := range cs.Volumes {
		if v.Target == "" {
			return invalid("volumes[%d].target: required", i)
		}
		mt := mount.Mount{Type: mount.TypeVolume, Source: v.Name, Target: v.Target, ReadOnly: v.ReadOnly}
		opts := &mount.VolumeOptions{NoCopy: v.NoCopy}
		if subpath {
			opts.Subpath = v.Subpath
		}
		if v.Driver != "" {
			opts.DriverConfig = &mount.Driver{Name: v.Driver, Options: maps.Clone(v.DriverOpts)}
		}
		if opts.NoCopy || opts.Subpath != "" || opts.DriverConfig != nil {
			mt.VolumeOptions = opts
		}
		hc.Mounts = append(hc.Mounts, mt)
	}
	for i, t := range cs.Tmpfs {
		if t.Target == "" {
			return invalid("tmpfs[%d].target: required", i)
		}
		mt := mount.Mount{Type: mount.TypeTmpfs, Target: t.Target}
		if t.Size != 0 || t.Mode != 0 {
			mt.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: t.Size, Mode: os.FileMode(t.Mode)}
		}
		hc.Mounts = append(hc.Mounts, mt)
	}
	return nil
}

func healthConfig(h *backends.Healthcheck, startInterval bool) *container.HealthConfig {
	switch {
	case h == nil:
		return nil
	case h.Disabled:
		return &container.HealthConfig{Test: []string{"NONE"}}
	}
	out := &container.HealthConfig{Test: slices.Clone(h.Test), Interval: h.Interval, Timeout: h.Timeout, StartPeriod: h.StartPeriod, Retries: h.Retries}
	if startInterval {
		out.StartInterval = h.StartInterval
	}
	return out
}

func mapResources(r backends.Resources, hc *container.HostConfig) {
	hc.NanoCPUs = int64(math.Round(r.CPUs * 1e9))
	hc.Memory = r.Memory
	if r.Pids != 0 {
		pids := r.Pids
		hc.PidsLimit = &pids
	}
	hc.MemoryReservation = r.MemoryReservation
}

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errdefs.ErrInvalidArgument)...)
}
