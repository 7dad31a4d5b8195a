package podman

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/docker/go-units"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// buildOptions are what Create found out before mapping (the I/O part):
// the daemon's facts and the resources it prepared.
type buildOptions struct {
	// ImageHealthcheck is the image's healthcheck, needed when the spec
	// has none or no test: podman would copy it as it is, without Docker's
	// defaults.
	ImageHealthcheck *healthConfig
	// ImageEntrypoint is the image's entrypoint, needed only when the spec
	// clears the command but keeps the entrypoint.
	ImageEntrypoint []string
	// HostPorts: index in cs.Ports → the host port chosen from its range.
	HostPorts map[int]int
	// VolumeNames: index in cs.Volumes → the volume created for an
	// anonymous volume with a driver or driver options.
	VolumeNames map[int]string
	// Mountpoints: index in cs.Volumes → the host directory of its volume,
	// for a subpath (podman 4 has no volume subpaths: they are binds).
	Mountpoints map[int]string
	// DefaultUlimits are the service's own default ulimits, needed when
	// the spec sets some: podman then drops its defaults and puts nproc
	// and nofile at 1048576, beyond the host's hard limits (runc fails).
	DefaultUlimits []backends.Ulimit
}

// buildSpec maps a resolved ContainerSpec onto podman's SpecGenerator. It
// does no I/O; errors are InvalidArgument naming the spec field.
func buildSpec(cs backends.ContainerSpec, o buildOptions) (specGenerator, error) {
	s := specGenerator{
		Name: cs.Name, Image: cs.Image, RawImageName: cs.Image, Labels: maps.Clone(cs.Labels),
		Terminal: cs.TTY, Stdin: cs.StdinOpen, Hostname: cs.Hostname, WorkDir: cs.WorkingDir,
		User: cs.User, Groups: slices.Clone(cs.GroupAdd), Init: cs.Init, ReadOnly: cs.ReadOnly, Privileged: cs.Privileged,
		CapAdd: slices.Clone(cs.CapAdd), CapDrop: slices.Clone(cs.CapDrop), Sysctl: maps.Clone(cs.Sysctls),
		DNSSearch: slices.Clone(cs.DNSSearch), DNSOption: slices.Clone(cs.DNSOptions),
	}
	if cs.StdinOnce {
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[labelStdinOnce] = "true"
	}
	// Docker makes a missing working directory; podman only when asked.
	s.CreateWD = cs.WorkingDir != ""
	if p := cs.Platform; p != nil {
		s.ImageOS, s.ImageArch, s.ImageVariant = p.OS, p.Architecture, p.Variant
	}
	mapCommand(cs, o, &s)
	if len(cs.Env) > 0 {
		s.Env = map[string]string{}
		for _, kv := range cs.Env {
			k, v, _ := strings.Cut(kv, "=")
			s.Env[k] = v
		}
	}
	if cs.Domainname != "" {
		// Podman has no domain name setting; the UTS namespace's sysctl is it.
		if s.Sysctl == nil {
			s.Sysctl = map[string]string{}
		}
		s.Sysctl["kernel.domainname"] = cs.Domainname
	}
	if err := mapLifecycle(cs, o, &s); err != nil {
		return s, err
	}
	if err := mapNetworking(cs, o, &s); err != nil {
		return s, err
	}
	if err := mapStorage(cs, o, &s); err != nil {
		return s, err
	}
	if err := mapSecurity(cs, &s); err != nil {
		return s, err
	}
	if err := mapLimits(cs, o.DefaultUlimits, &s); err != nil {
		return s, err
	}
	s.PidNS, s.IpcNS, s.UtsNS, s.UserNS, s.CgroupNS = nsOf(cs.PID), nsOf(cs.IPC), nsOf(cs.UTS), nsOf(cs.UserNS), nsOf(cs.Cgroup)
	return s, nil
}

// mapCommand: nil keeps the image's, empty clears it. Podman runs the
// image's command only when neither entrypoint nor command is given, and
// skips an entrypoint of [""].
func mapCommand(cs backends.ContainerSpec, o buildOptions, s *specGenerator) {
	switch {
	case cs.Entrypoint == nil:
	case len(cs.Entrypoint) == 0:
		s.Entrypoint = &[]string{""}
	default:
		ep := slices.Clone(cs.Entrypoint)
		s.Entrypoint = &ep
	}
	switch {
	case cs.Command == nil:
	case len(cs.Command) == 0:
		s.Command = &[]string{}
		if cs.Entrypoint == nil {
			// Keep the image's entrypoint, spelled out, so that podman
			// does not fall back to the image's command.
			ep := slices.Clone(o.ImageEntrypoint)
			if len(ep) == 0 {
				ep = []string{""}
			}
			s.Entrypoint = &ep
		}
	default:
		cmd := slices.Clone(cs.Command)
		s.Command = &cmd
	}
}

func mapLifecycle(cs backends.ContainerSpec, o buildOptions, s *specGenerator) error {
	if cs.StopSignal != 0 {
		s.StopSignal = int(cs.StopSignal)
	}
	if cs.StopTimeout != nil {
		secs := uint(max(math.Ceil(cs.StopTimeout.Seconds()), 0))
		s.StopTimeout = &secs
	}
	switch r := cs.Restart; r.Name {
	case "", spec.RestartNo:
	case spec.RestartAlways, spec.RestartUnlessStopped:
		s.Restart = r.Name
	case spec.RestartOnFailure:
		s.Restart = r.Name
		if r.MaxRetries > 0 {
			n := uint(r.MaxRetries)
			s.RestartTries = &n
		}
	default:
		return invalid("restart: %q is not a restart policy", r.Name)
	}
	if h := healthSpec(cs.Healthcheck, o.ImageHealthcheck); h != nil {
		s.Health = h
		if hc := cs.Healthcheck; hc != nil && hc.StartInterval > 0 && h.Test[0] != "NONE" {
			if s.Labels == nil {
				s.Labels = map[string]string{}
			}
			s.Labels[labelHealthStartInterval] = hc.StartInterval.String()
		}
	}
	if l := cs.Logging; l != nil && l.Driver != "" {
		lc, err := logConfigOf(*l)
		if err != nil {
			return err
		}
		s.Log = lc
	}
	return nil
}

// logDrivers maps Compose's log driver names to podman's.
var logDrivers = map[string]string{
	"json-file": "k8s-file", "k8s-file": "k8s-file", "journald": "journald", "none": "none", "passthrough": "passthrough",
}

func logConfigOf(l spec.Logging) (*logConfig, error) {
	driver, ok := logDrivers[l.Driver]
	if !ok {
		return nil, invalid("logging.driver: podman has no %q log driver (it has json-file, k8s-file, journald, none, passthrough)", l.Driver)
	}
	lc := &logConfig{Driver: driver}
	for _, k := range slices.Sorted(maps.Keys(l.Options)) {
		v := l.Options[k]
		switch {
		case k == "max-size":
			n, err := units.RAMInBytes(v)
			if err != nil {
				return nil, invalid("logging.options.max-size: %q is not a size", v)
			}
			lc.Size = n
		case k == "tag" && driver == "journald":
			lc.Options = map[string]string{"tag": v}
		}
		// Other options (max-file, a tag for a file log) are a declared
		// gap: conmon fails to start with options its log driver lacks.
	}
	return lc, nil
}

func mapNetworking(cs backends.ContainerSpec, o buildOptions, s *specGenerator) error {
	switch cs.Network.Kind {
	case "":
		s.NetNS = &namespace{NSMode: "bridge"}
		for i, att := range cs.Networks {
			pn := perNetwork{Aliases: slices.Clone(att.Aliases)}
			for field, ip := range map[string]string{"ipv4": att.IPv4, "ipv6": att.IPv6} {
				if ip == "" {
					continue
				}
				a, err := netip.ParseAddr(ip)
				if err != nil || (field == "ipv4") != a.Is4() {
					return invalid("networks[%d].%s: %q is not an %s address", i, field, ip, strings.ToUpper(field[:2])+field[2:])
				}
				pn.StaticIPs = append(pn.StaticIPs, a.String())
			}
			slices.Sort(pn.StaticIPs)
			if s.Networks == nil {
				s.Networks = map[string]perNetwork{}
			}
			s.Networks[att.Network] = pn
		}
	case "bridge", "host", "none":
		s.NetNS = &namespace{NSMode: cs.Network.Kind}
	case "container":
		s.NetNS = &namespace{NSMode: "container", Value: cs.Network.Container}
	default:
		return invalid("networkMode: podman has no %q network mode", cs.Network.Kind)
	}
	for i, p := range cs.Ports {
		if p.ContainerPort <= 0 || p.ContainerPort > 65535 {
			return invalid("ports[%d].container: %d is not a port", i, p.ContainerPort)
		}
		pm := portMapping{ContainerPort: uint16(p.ContainerPort), Protocol: p.Protocol}
		if p.HostIP != "" {
			ip, err := netip.ParseAddr(p.HostIP)
			if err != nil {
				return invalid("ports[%d].hostIP: %q is not an IP address", i, p.HostIP)
			}
			pm.HostIP = ip.String()
		}
		host := p.HostPort
		if chosen, ok := o.HostPorts[i]; ok {
			host = chosen
		}
		if host < 0 || host > 65535 {
			return invalid("ports[%d].host: %d is not a port", i, host)
		}
		pm.HostPort = uint16(host)
		s.Ports = append(s.Ports, pm)
	}
	for _, e := range cs.Expose {
		if s.Expose == nil {
			s.Expose = map[int]string{}
		}
		if cur := s.Expose[e.Port]; cur != "" && !strings.Contains(cur, e.Protocol) {
			s.Expose[e.Port] = cur + "," + e.Protocol
		} else if cur == "" {
			s.Expose[e.Port] = e.Protocol
		}
	}
	for i, d := range cs.DNS {
		ip, err := netip.ParseAddr(d)
		if err != nil {
			return invalid("dns[%d]: %q is not an IP address", i, d)
		}
		s.DNSServer = append(s.DNSServer, ip.String())
	}
	for _, h := range cs.ExtraHosts {
		s.HostAdd = append(s.HostAdd, h.Host+":"+h.IP)
	}
	return nil
}

// mapSecurity maps the security options onto podman's fields.
func mapSecurity(cs backends.ContainerSpec, s *specGenerator) error {
	sec := cs.Security
	if sec.WritableCgroups {
		return invalid("securityOpt: podman has no security option writable-cgroups")
	}
	s.NoNewPriv, s.Seccomp, s.AppArmor = sec.NoNewPrivileges, sec.Seccomp, sec.AppArmor
	s.SELinux = slices.Clone(sec.SELinux)
	s.Mask, s.Unmask = slices.Clone(sec.Mask), slices.Clone(sec.Unmask)
	if sec.SystemPathsUnconfined {
		s.Unmask = append(s.Unmask, "ALL")
	}
	return nil
}

// mapLimits maps cgroup limits and ulimits; the service's defaults fill in
// the ulimits the spec does not name.
func mapLimits(cs backends.ContainerSpec, defaults []backends.Ulimit, s *specGenerator) error {
	r := cs.Resources
	var res resources
	set := false
	if r.Memory > 0 || r.MemoryReservation > 0 {
		res.Memory = &struct {
			Limit       *int64 `json:"limit,omitempty"`
			Reservation *int64 `json:"reservation,omitempty"`
		}{}
		if r.Memory > 0 {
			res.Memory.Limit = &r.Memory
		}
		if r.MemoryReservation > 0 {
			res.Memory.Reservation = &r.MemoryReservation
		}
		set = true
	}
	if r.CPUs > 0 {
		period := uint64(100000)
		quota := int64(math.Round(r.CPUs * float64(period)))
		res.CPU = &struct {
			Quota  *int64  `json:"quota,omitempty"`
			Period *uint64 `json:"period,omitempty"`
		}{Quota: &quota, Period: &period}
		set = true
	}
	if r.Pids > 0 {
		res.Pids = &struct {
			Limit int64 `json:"limit"`
		}{Limit: r.Pids}
		set = true
	}
	if set {
		s.Resources = &res
	}
	for _, u := range cs.Ulimits {
		if u.Soft < 0 || u.Hard < 0 {
			return invalid("ulimits.%s: limits must not be negative", u.Name)
		}
		s.Rlimits = append(s.Rlimits, rlimit{Type: strings.ToLower(u.Name), Soft: uint64(u.Soft), Hard: uint64(u.Hard)})
	}
	if len(cs.Ulimits) > 0 {
		for _, d := range defaults {
			named := slices.ContainsFunc(cs.Ulimits, func(u backends.Ulimit) bool { return strings.EqualFold(u.Name, d.Name) })
			if !named {
				s.Rlimits = append(s.Rlimits, rlimit{Type: strings.ToLower(d.Name), Soft: uint64(d.Soft), Hard: uint64(d.Hard)})
			}
		}
	}
	return nil
}

// nsOf maps a namespace mode; nil keeps podman's default.
func nsOf(m backends.NamespaceMode) *namespace {
	switch m.Kind {
	case "":
		return nil
	case "container":
		return &namespace{NSMode: "container", Value: m.Container}
	}
	return &namespace{NSMode: m.Kind}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errdefs.ErrInvalidArgument)...)
}

// healthSpec is the healthcheck podman keeps for the container: the
// spec's, completed from the image's as Docker merges them (a missing test
// or timing is the image's), then Docker's defaults for what neither sets.
// It is nil when podman should keep the image's as it is (neither has one).
func healthSpec(h *backends.Healthcheck, img *healthConfig) *healthConfig {
	if h != nil && (h.Disabled || len(h.Test) > 0 && h.Test[0] == "NONE") {
		return &healthConfig{Test: []string{"NONE"}}
	}
	var out healthConfig
	if img != nil && len(img.Test) > 0 && img.Test[0] != "NONE" {
		out = *img
		out.Test = slices.Clone(img.Test)
	}
	if h != nil {
		if len(h.Test) > 0 {
			out.Test = slices.Clone(h.Test)
		}
		out.Interval = cmp.Or(h.Interval, out.Interval)
		out.Timeout = cmp.Or(h.Timeout, out.Timeout)
		out.StartPeriod = cmp.Or(h.StartPeriod, out.StartPeriod)
		out.Retries = cmp.Or(h.Retries, out.Retries)
	}
	if len(out.Test) == 0 {
		if img != nil && len(img.Test) > 0 {
			return &healthConfig{Test: []string{"NONE"}} // the image's is NONE
		}
		return nil
	}
	out.Interval = cmp.Or(out.Interval, defaultHealthInterval)
	out.Timeout = cmp.Or(out.Timeout, defaultHealthTimeout)
	out.Retries = cmp.Or(out.Retries, defaultHealthRetries)
	return &out
}
