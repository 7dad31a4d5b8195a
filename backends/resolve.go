package backends

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// ResolveInput is what Resolve needs besides the app: the replica's
// identity, the project's networks and volumes (by key, runtime names
// set), the files' contents, and the containers service references name.
type ResolveInput struct {
	Project  string
	App      spec.App
	Replica  int
	Name     string
	Labels   map[string]string // identity labels; they win over the app's
	Networks map[string]spec.Network
	Volumes  map[string]spec.Volume
	Files    []File
	// StdinOnce: see ContainerSpec.
	StdinOnce bool
	// Services maps a service name to the container ID of its first
	// replica, for network_mode/pid/ipc "service:NAME".
	Services map[string]string
	// JoinNetwork is a container whose network namespace the app joins
	// instead of App.NetworkMode's (its caretaker companion, which owns it).
	JoinNetwork string
	// NoAliases: the container answers to no name on its networks but
	// its own (compose run's one-off, without --use-aliases).
	NoAliases bool
	// Inherit are the anonymous volumes (target → name) of the container
	// this one replaces (backends.VolumeInheritor).
	Inherit map[string]string
}

// Resolve turns a validated app into the ContainerSpec a backend maps. It
// is pure (no I/O) and the one place spec strings become typed values.
func Resolve(in ResolveInput) (ContainerSpec, error) {
	a := in.App
	cs := ContainerSpec{
		Project: in.Project, App: a.Name, Replica: in.Replica, Name: in.Name,
		Labels: mergeLabels(a.Labels, in.Labels),
		Image:  a.Image, PullAuth: a.PullAuth, User: a.User, WorkingDir: a.WorkingDir, Hostname: a.Hostname, Domainname: a.Domainname,
		GroupAdd: slices.Clone(a.GroupAdd), TTY: a.TTY, StdinOpen: a.StdinOpen, StdinOnce: in.StdinOnce,
		Init: a.Init != nil && *a.Init, ReadOnly: a.ReadOnly, Privileged: a.Privileged,
		DNS: slices.Clone(a.DNS), DNSSearch: slices.Clone(a.DNSSearch), DNSOptions: slices.Clone(a.DNSOptions),
		Files: in.Files, Devices: slices.Clone(a.Devices),
		DeviceCgroupRules: slices.Clone(a.DeviceCgroupRules), Sysctls: maps.Clone(a.Sysctls),
		ShmSize: int64(a.ShmSize), Logging: a.Logging,
	}
	if a.Entrypoint != nil {
		cs.Entrypoint = append([]string{}, a.Entrypoint...)
	}
	if a.Command != nil {
		cs.Command = append([]string{}, a.Command...)
	}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		cs.Env = append(cs.Env, k+"="+a.Env[k])
	}
	var err error
	if cs.CapAdd, err = canonicalCaps("capAdd", a.CapAdd); err != nil {
		return cs, err
	}
	if cs.CapDrop, err = canonicalCaps("capDrop", a.CapDrop); err != nil {
		return cs, err
	}
	if cs.Security, err = parseSecurity("securityOpt", a.SecurityOpt); err != nil {
		return cs, err
	}
	if a.Platform != "" {
		if cs.Platform, err = parsePlatform(a.Platform); err != nil {
			return cs, err
		}
	}
	if a.Restart != "" {
		if cs.Restart, err = spec.ParseRestart(a.Restart); err != nil {
			return cs, invalid("restart: %v", err)
		}
	}
	if a.StopSignal != "" {
		n, ok := spec.ParseSignal(a.StopSignal)
		if !ok {
			return cs, invalid("stopSignal: %q is not a signal", a.StopSignal)
		}
		cs.StopSignal = spec.Signal(n)
	}
	if a.StopGracePeriod != nil {
		d := a.StopGracePeriod.Std()
		cs.StopTimeout = &d
	}
	cs.Healthcheck = healthcheck(a.Healthcheck)
	if err := resolveNetworking(&cs, in); err != nil {
		return cs, err
	}
	resolveStorage(&cs, in)
	if cs.PID, err = namespace("pidMode", a.PidMode, in.Services); err != nil {
		return cs, err
	}
	if cs.IPC, err = namespace("ipcMode", a.IpcMode, in.Services); err != nil {
		return cs, err
	}
	cs.UTS, cs.UserNS, cs.Cgroup = NamespaceMode{Kind: a.UTSMode}, NamespaceMode{Kind: a.UsernsMode}, NamespaceMode{Kind: a.CgroupnsMode}
	for _, name := range slices.Sorted(maps.Keys(a.Ulimits)) {
		u := a.Ulimits[name]
		cs.Ulimits = append(cs.Ulimits, Ulimit{Name: name, Soft: u.Soft, Hard: u.Hard})
	}
	if r := a.Resources; r != nil {
		if l := r.Limits; l != nil {
			cs.Resources.CPUs, cs.Resources.Memory, cs.Resources.Pids = l.CPUs, int64(l.Memory), l.Pids
		}
		if l := r.Reservations; l != nil {
			cs.Resources.CPUReservation, cs.Resources.MemoryReservation, cs.Resources.PidsReservation = l.CPUs, int64(l.Memory), l.Pids
		}
	}
	return cs, nil
}

func resolveNetworking(cs *ContainerSpec, in ResolveInput) error {
	a := in.App
	mode, err := namespace("networkMode", a.NetworkMode, in.Services)
	if err != nil {
		return err
	}
	if in.JoinNetwork != "" {
		mode = NamespaceMode{Kind: "container", Container: in.JoinNetwork}
	}
	cs.Network = NetworkMode(mode)
	if cs.Network.Kind != "" && len(a.Networks) > 0 {
		return invalid("networks: an app with networkMode %q cannot join networks", a.NetworkMode)
	}
	for _, att := range a.Networks {
		cs.Networks = append(cs.Networks, NetworkAttachment{
			Network: RuntimeName(in.Project, att.Name, in.Networks[att.Name].Name), Key: att.Name,
			Aliases: aliases(a.Name, att.Aliases), IPv4: att.IPv4, IPv6: att.IPv6,
		})
		if in.NoAliases {
			cs.Networks[len(cs.Networks)-1].Aliases = nil
		}
	}
	for _, p := range a.Ports {
		cs.Ports = append(cs.Ports, PortMapping{HostIP: p.HostIP, HostPort: p.Host, HostPortEnd: p.HostEnd, ContainerPort: p.Container, Protocol: p.Proto()})
	}
	slices.SortFunc(cs.Ports, func(x, y PortMapping) int { // one canonical order
		return cmp.Or(cmp.Compare(x.ContainerPort, y.ContainerPort), strings.Compare(x.Protocol, y.Protocol),
			strings.Compare(x.HostIP, y.HostIP), cmp.Compare(x.HostPort, y.HostPort))
	})
	for i, e := range a.Expose {
		lo, hi, proto, err := spec.ParsePortRange(e)
		if err != nil {
			return invalid("expose[%d]: %v", i, err)
		}
		for port := lo; port <= hi; port++ {
			cs.Expose = append(cs.Expose, ExposedPort{Port: port, Protocol: proto})
		}
	}
	for _, host := range slices.Sorted(maps.Keys(a.ExtraHosts)) {
		for _, ip := range a.ExtraHosts[host] {
			cs.ExtraHosts = append(cs.ExtraHosts, HostEntry{Host: host, IP: ip})
		}
	}
	return nil
}

func resolveStorage(cs *ContainerSpec, in ResolveInput) {
	for _, m := range in.App.Mounts {
		cs.Binds = append(cs.Binds, Bind(m))
	}
	for _, v := range in.App.Volumes {
		vm := VolumeMount{Target: v.Target, ReadOnly: v.ReadOnly, NoCopy: v.NoCopy, Subpath: v.Subpath}
		declared, ok := in.Volumes[v.Source]
		if v.Source != "" {
			vm.Name = v.Source
			if ok {
				vm.Name = RuntimeName(in.Project, v.Source, declared.Name)
			}
		}
		if !ok && (v.Driver != "" || len(v.DriverOpts) > 0) {
			vm.Driver, vm.DriverOpts = v.Driver, maps.Clone(v.DriverOpts)
			if vm.Driver == "" {
				vm.Driver = "local" // options alone mean the default driver's
			}
		}
		cs.Volumes = append(cs.Volumes, vm)
	}
	for _, t := range in.App.Tmpfs {
		cs.Tmpfs = append(cs.Tmpfs, TmpfsMount{Target: t.Target, Size: int64(t.Size), Mode: uint32(t.Mode)})
	}
	inheritVolumes(cs, in.Inherit)
}

// inheritVolumes gives cs the anonymous volumes of the container it
// replaces (target → name): at its anonymous volume mounts, and where it
// mounts nothing else (the image's VOLUMEs). A target it now mounts a
// named volume, a bind or a tmpfs at inherits nothing.
func inheritVolumes(cs *ContainerSpec, inherit map[string]string) {
	if len(inherit) == 0 {
		return
	}
	taken := map[string]bool{}
	for i, v := range cs.Volumes {
		taken[v.Target] = true
		if name, ok := inherit[v.Target]; ok && v.Name == "" {
			cs.Volumes[i].Name, cs.Volumes[i].Inherited = name, true
		}
	}
	for _, b := range cs.Binds {
		taken[b.Target] = true
	}
	for _, t := range cs.Tmpfs {
		taken[t.Target] = true
	}
	for _, target := range slices.Sorted(maps.Keys(inherit)) {
		if !taken[target] {
			cs.Volumes = append(cs.Volumes, VolumeMount{Name: inherit[target], Target: target, Inherited: true})
		}
	}
}

// InheritedNames are the names of cs's inherited volumes.
func InheritedNames(cs ContainerSpec) []string {
	var out []string
	for _, v := range cs.Volumes {
		if v.Inherited {
			out = append(out, v.Name)
		}
	}
	return out
}

// RuntimeName is a project resource's runtime name: its own, else
// spec.RuntimeName's.
func RuntimeName(project, key, name string) string {
	if name != "" {
		return name
	}
	return spec.RuntimeName(project, key)
}

// namespace resolves a namespace mode: "service:NAME" becomes the
// container of that service's first replica.
func namespace(field, mode string, services map[string]string) (NamespaceMode, error) {
	switch {
	case mode == "":
		return NamespaceMode{}, nil
	case strings.HasPrefix(mode, "service:"):
		svc := strings.TrimPrefix(mode, "service:")
		id, ok := services[svc]
		if !ok {
			return NamespaceMode{}, fmt.Errorf("%s: service %q has no running container to share with: %w", field, svc, errdefs.ErrFailedPrecondition)
		}
		return NamespaceMode{Kind: "container", Container: id}, nil
	case strings.HasPrefix(mode, "container:"):
		return NamespaceMode{Kind: "container", Container: strings.TrimPrefix(mode, "container:")}, nil
	}
	return NamespaceMode{Kind: mode}, nil
}

func healthcheck(h *spec.Healthcheck) *Healthcheck {
	if h == nil {
		return nil
	}
	if h.Disable || (len(h.Test) > 0 && h.Test[0] == "NONE") {
		return &Healthcheck{Disabled: true}
	}
	out := &Healthcheck{Test: slices.Clone(h.Test)}
	dur := func(d *spec.Duration) time.Duration {
		if d == nil {
			return 0
		}
		return d.Std()
	}
	out.Interval, out.Timeout, out.StartPeriod, out.StartInterval = dur(h.Interval), dur(h.Timeout), dur(h.StartPeriod), dur(h.StartInterval)
	if h.Retries != nil {
		out.Retries = *h.Retries
	}
	return out
}

// mergeLabels returns the app's labels overlaid with the identity labels.
func mergeLabels(app, identity map[string]string) map[string]string {
	out := make(map[string]string, len(app)+len(identity))
	maps.Copy(out, app)
	maps.Copy(out, identity)
	return out
}

// aliases are the names a container answers to on a network: its service
// name first, then the attachment's aliases.
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

func parsePlatform(s string) (*Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return nil, invalid("platform: %q is not os/arch[/variant]", s)
	}
	p := &Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errdefs.ErrInvalidArgument)...)
}
