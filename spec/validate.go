package spec

import (
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strings"
)

var (
	projectNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	appNameRE     = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	resourceRE    = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
)

// Validate reports every problem in the project at once, each with its field
// path. It does not mutate p.
func (p Project) Validate() error {
	var ps Problems
	if p.Name == "" {
		ps.add("name", "required: set the project name")
	} else if !projectNameRE.MatchString(p.Name) {
		ps.add("name", "%q is not a valid project name: use lowercase letters, digits, '-' and '_', starting with a letter or digit", p.Name)
	}
	if len(p.Services) == 0 {
		ps.add("services", "at least one service is required")
	}
	for _, key := range sortedKeys(p.Networks) {
		p.Networks[key].validate("networks."+key, &ps)
	}
	for _, key := range sortedKeys(p.Volumes) {
		v := p.Volumes[key]
		if !resourceRE.MatchString(key) {
			ps.add("volumes."+key, "invalid volume name: use letters, digits, '_', '.' and '-'")
		}
		if v.External && (v.Driver != "" || len(v.DriverOpts) > 0) {
			ps.add("volumes."+key+".external", "an external volume cannot set driver or driverOpts")
		}
	}
	for _, name := range p.ServiceNames() {
		p.validateApp(name, p.Services[name], &ps)
	}
	p.validateDependencyCycles(&ps)
	return ps.Err("")
}

func (n Network) validate(at string, ps *Problems) {
	if n.External && (n.Driver != "" || len(n.Subnets) > 0 || len(n.DriverOpts) > 0) {
		ps.add(at+".external", "an external network cannot set driver, driverOpts or subnets")
	}
	for i, s := range n.Subnets {
		sp := fmt.Sprintf("%s.subnets[%d]", at, i)
		pfx, err := netip.ParsePrefix(s.Subnet)
		if err != nil {
			ps.add(sp+".subnet", "%q is not a CIDR such as 172.28.0.0/16", s.Subnet)
			continue
		}
		if s.Gateway != "" {
			if gw, err := netip.ParseAddr(s.Gateway); err != nil || !pfx.Contains(gw) {
				ps.add(sp+".gateway", "%q is not an address inside %s", s.Gateway, s.Subnet)
			}
		}
		if s.IPRange != "" {
			if r, err := netip.ParsePrefix(s.IPRange); err != nil || !pfx.Contains(r.Addr()) {
				ps.add(sp+".ipRange", "%q is not a CIDR inside %s", s.IPRange, s.Subnet)
			}
		}
	}
}

// validateModes checks the namespace modes: a service, container or the
// host's, as each allows.
func (p Project) validateModes(at string, a App, ps *Problems) {
	validateNamespaceMode(at+".pidMode", a.PidMode, p, ps, "host")
	validateNamespaceMode(at+".ipcMode", a.IpcMode, p, ps, "host", "private", "shareable", "none")
	validateHostOnly(at+".utsMode", a.UTSMode, ps, "host")
	validateHostOnly(at+".usernsMode", a.UsernsMode, ps, "host")
	validateHostOnly(at+".cgroupnsMode", a.CgroupnsMode, ps, "host", "private")
}

func (p Project) validateApp(name string, a App, ps *Problems) {
	at := "services." + name
	if !appNameRE.MatchString(name) {
		ps.add(at, "invalid service name: use letters, digits, '_', '.' and '-', starting with a letter or digit")
	}
	if a.Image == "" {
		ps.add(at+".image", "required: name the image to run")
	}
	if a.Build != nil {
		a.Build.validate(at+".build", ps)
	}
	if a.Replicas != nil && *a.Replicas < 0 {
		ps.add(at+".replicas", "must be 0 or more")
	}
	if u := a.Update; u != nil {
		if u.Parallelism < 0 || u.Parallelism > UpdateAllAtOnce {
			ps.add(at+".update.parallelism", "must be 0 to %d", UpdateAllAtOnce)
		}
		if u.Order != "" && u.Order != UpdateStopFirst && u.Order != UpdateStartFirst {
			ps.add(at+".update.order", "%q: use %s or %s", u.Order, UpdateStopFirst, UpdateStartFirst)
		}
	}
	validateWatch(at+".watch", a.Watch, ps)
	validateHostName(at+".hostname", a.Hostname, ps)
	validateHostName(at+".domainname", a.Domainname, ps)
	if a.ContainerName != "" && a.ReplicaCount() > 1 {
		ps.add(at+".containerName", "cannot be set when replicas > 1 (names must be unique)")
	}
	if a.Restart != "" {
		if _, err := ParseRestart(a.Restart); err != nil {
			ps.add(at+".restart", "%v", err)
		}
	}
	if _, _, err := ParsePullPolicy(a.PullPolicy); err != nil {
		ps.add(at+".pullPolicy", "%v", err)
	}
	for i, port := range a.Ports {
		validatePort(fmt.Sprintf("%s.ports[%d]", at, i), port, ps)
	}
	for i, e := range a.Expose {
		if _, _, _, err := ParsePortRange(e); err != nil {
			ps.add(fmt.Sprintf("%s.expose[%d]", at, i), "%v", err)
		}
	}
	p.validateNetworking(at, a, ps)
	p.validateStorage(at, a, ps)
	validateHealthcheck(at+".healthcheck", a.Healthcheck, ps)
	p.validateDependsOn(at, name, a.DependsOn, ps)
	validateHooks(at+".hooks", a.Hooks, ps)
	validateExecLimits(at, a, ps)
	validateResources(at+".resources", a.Resources, ps)
	if a.StopSignal != "" {
		if _, ok := ParseSignal(a.StopSignal); !ok {
			ps.add(at+".stopSignal", "%q is not a signal name such as SIGTERM or SIGINT", a.StopSignal)
		}
	}
	if a.StopGracePeriod != nil && *a.StopGracePeriod < 0 {
		ps.add(at+".stopGracePeriod", "must not be negative")
	}
	for i, d := range a.Devices {
		if d.Source == "" {
			ps.add(fmt.Sprintf("%s.devices[%d].source", at, i), "required: the host device path")
		}
	}
	for _, k := range sortedKeys(a.Ulimits) {
		if u := a.Ulimits[k]; u.Soft > u.Hard {
			ps.add(at+".ulimits."+k, "soft limit %d exceeds hard limit %d", u.Soft, u.Hard)
		}
	}
	if a.ShmSize < 0 {
		ps.add(at+".shmSize", "must not be negative")
	}
	p.validateModes(at, a, ps)
	for i, r := range a.DeviceCgroupRules {
		if !validDeviceRule(r) {
			ps.add(fmt.Sprintf("%s.deviceCgroupRules[%d]", at, i), "%q is not a device cgroup rule such as 'c 1:3 mr' (type a|b|c, MAJOR:MINOR with * for any, access r, w, m)", r)
		}
	}
	validateFileMounts(at+".secrets", a.Secrets, ps)
	validateFileMounts(at+".configs", a.Configs, ps)
	a.validateRemote(at, ps)
}

// validateRemote checks what a remote deployment's caretaker acts on: the
// egress policy and the credentials.
func (a App) validateRemote(at string, ps *Problems) {
	a.Egress.validate(at+".egress", ps)
	validateCredentials(at+".credentials", a.Credentials, ps)
	for i, c := range a.Credentials {
		if _, set := a.Env[c.Variable]; c.Deliver == DeliverEnv && set {
			ps.add(fmt.Sprintf("%s.credentials[%d].variable", at, i), "%s is in the service's environment too: remove it there or name another variable", c.Variable)
		}
	}
	if a.Docker && a.Egress != nil && a.Egress.Mode == EgressTransparent {
		ps.add(at+".docker", "the docker endpoint cannot share a replica with egress mode transparent: the redirect would take the endpoint's own connections to the server; use egress mode proxy (docker honours HTTP_PROXY) or give docker to another service")
	}
}

// hostLabelRE is one RFC 1123 label: letters, digits and '-', neither
// first nor last.
// validateDependsOn checks name's dependencies: defined (unless
// optional), not itself, with a known condition.
func (p Project) validateDependsOn(at, name string, deps map[string]Dependency, ps *Problems) {
	for _, dep := range sortedKeys(deps) {
		d := deps[dep]
		dp := at + ".dependsOn." + dep
		if dep == name {
			ps.add(dp, "a service cannot depend on itself")
		} else if _, ok := p.Services[dep]; !ok && d.IsRequired() {
			ps.add(dp, "service %q is not defined (mark the dependency required: false if it is optional)", dep)
		}
		switch d.Condition {
		case ConditionStarted, ConditionHealthy, ConditionCompleted:
		default:
			ps.add(dp+".condition", "%q is not one of %s, %s, %s", d.Condition, ConditionStarted, ConditionHealthy, ConditionCompleted)
		}
	}
}

var hostLabelRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

// maxUTSName is the kernel's limit on a host or domain name.
const maxUTSName = 64

// validateHostName checks a hostname or domainname: RFC 1123 labels, at
// most the kernel's 64 bytes. Runtimes write these into configuration
// files (Incus's raw.lxc), where a line break would start a new setting.
func validateHostName(at, name string, ps *Problems) {
	if name == "" {
		return
	}
	ok := len(name) <= maxUTSName
	for _, l := range strings.Split(name, ".") {
		ok = ok && hostLabelRE.MatchString(l)
	}
	if !ok {
		ps.add(at, "%q is not an RFC 1123 host name: use dot-separated labels of letters, digits and '-' (not first or last in a label, at most 63 each), %d characters in all at most", name, maxUTSName)
	}
}

func validatePort(at string, port Port, ps *Problems) {
	if port.Container < 1 || port.Container > 65535 {
		ps.add(at+".container", "must be 1-65535")
	}
	if port.Host < 0 || port.Host > 65535 {
		ps.add(at+".host", "must be 0-65535 (0 picks a free port)")
	}
	if port.HostEnd != 0 && (port.HostEnd < port.Host || port.HostEnd > 65535 || port.Host == 0) {
		ps.add(at+".hostEnd", "must be between host and 65535")
	}
	switch port.Protocol {
	case "", "tcp", "udp", "sctp":
	default:
		ps.add(at+".protocol", "%q is not one of tcp, udp, sctp", port.Protocol)
	}
	if port.HostIP != "" {
		if _, err := netip.ParseAddr(port.HostIP); err != nil {
			ps.add(at+".hostIP", "%q is not an IP address", port.HostIP)
		}
	}
}

func (p Project) validateNetworking(at string, a App, ps *Problems) {
	if a.NetworkMode != "" {
		if len(a.Networks) > 0 {
			ps.add(at+".networkMode", "cannot be combined with networks")
		}
		switch {
		case a.NetworkMode == "host", a.NetworkMode == "none", a.NetworkMode == "bridge":
		case strings.HasPrefix(a.NetworkMode, "service:"):
			if _, ok := p.Services[strings.TrimPrefix(a.NetworkMode, "service:")]; !ok {
				ps.add(at+".networkMode", "service %q is not defined", strings.TrimPrefix(a.NetworkMode, "service:"))
			}
		case strings.HasPrefix(a.NetworkMode, "container:"):
		default:
			ps.add(at+".networkMode", "%q is not one of host, none, bridge, service:NAME, container:NAME", a.NetworkMode)
		}
	}
	for i, n := range a.Networks {
		np := fmt.Sprintf("%s.networks[%d]", at, i)
		if _, ok := p.Networks[n.Name]; !ok {
			ps.add(np+".name", "network %q is not declared under networks", n.Name)
		}
		if n.IPv4 != "" {
			if ip, err := netip.ParseAddr(n.IPv4); err != nil || !ip.Is4() {
				ps.add(np+".ipv4", "%q is not an IPv4 address", n.IPv4)
			}
		}
		if n.IPv6 != "" {
			if ip, err := netip.ParseAddr(n.IPv6); err != nil || !ip.Is6() {
				ps.add(np+".ipv6", "%q is not an IPv6 address", n.IPv6)
			}
		}
	}
	for i, d := range a.DNS {
		if _, err := netip.ParseAddr(d); err != nil {
			ps.add(fmt.Sprintf("%s.dns[%d]", at, i), "%q is not an IP address", d)
		}
	}
	for _, h := range sortedKeys(a.ExtraHosts) {
		for _, ip := range a.ExtraHosts[h] {
			if _, err := netip.ParseAddr(ip); err != nil && ip != "host-gateway" {
				ps.add(at+".extraHosts."+h, "%q is not an IP address (or host-gateway)", ip)
			}
		}
	}
}

func (p Project) validateStorage(at string, a App, ps *Problems) {
	targets := map[string]string{}
	claim := func(fp, target string) {
		if !path.IsAbs(target) {
			ps.add(fp+".target", "%q must be an absolute path in the container", target)
			return
		}
		if prev, ok := targets[path.Clean(target)]; ok {
			ps.add(fp+".target", "%q is already mounted by %s", target, prev)
			return
		}
		targets[path.Clean(target)] = fp
	}
	for i, m := range a.Mounts {
		mp := fmt.Sprintf("%s.mounts[%d]", at, i)
		if m.Source == "" {
			ps.add(mp+".source", "required: the host path to bind")
		}
		claim(mp, m.Target)
		switch m.Propagation {
		case "", "private", "rprivate", "shared", "rshared", "slave", "rslave":
		default:
			ps.add(mp+".propagation", "%q is not a mount propagation mode", m.Propagation)
		}
	}
	for i, v := range a.Volumes {
		vp := fmt.Sprintf("%s.volumes[%d]", at, i)
		claim(vp, v.Target)
		if v.Source == "" {
			continue
		}
		decl, ok := p.Volumes[v.Source]
		if !ok {
			ps.add(vp+".source", "volume %q is not declared under volumes", v.Source)
		} else if (v.Driver != "" || len(v.DriverOpts) > 0) && (decl.Driver != "" || len(decl.DriverOpts) > 0 || decl.External) {
			ps.add(vp+".driver", "volume %q is declared under volumes: set driver options there", v.Source)
		}
	}
	for i, t := range a.Tmpfs {
		claim(fmt.Sprintf("%s.tmpfs[%d]", at, i), t.Target)
	}
}

func validateNamespaceMode(at, mode string, p Project, ps *Problems, allowed ...string) {
	if mode == "" {
		return
	}
	for _, a := range allowed {
		if mode == a {
			return
		}
	}
	if svc, ok := strings.CutPrefix(mode, "service:"); ok {
		if _, ok := p.Services[svc]; !ok {
			ps.add(at, "service %q is not defined", svc)
		}
		return
	}
	if strings.HasPrefix(mode, "container:") {
		return
	}
	ps.add(at, "%q is not one of %s, service:NAME, container:NAME", mode, strings.Join(allowed, ", "))
}

// validateHostOnly checks a namespace mode that only takes fixed values
// (no sharing with another container).
func validateHostOnly(at, mode string, ps *Problems, allowed ...string) {
	if mode != "" && !slices.Contains(allowed, mode) {
		ps.add(at, "%q is not one of %s", mode, strings.Join(allowed, ", "))
	}
}

// deviceRule is the device cgroup rule syntax: type, MAJOR:MINOR, access.
var deviceRule = regexp.MustCompile(`^[abc] (\*|[0-9]+):(\*|[0-9]+) [rwm]{1,3}$`)

func validDeviceRule(r string) bool { return deviceRule.MatchString(r) }

// validateDependencyCycles reports each dependsOn cycle once, on the
// alphabetically first service in it.
func (p Project) validateDependencyCycles(ps *Problems) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	reported := map[string]bool{}
	var stack []string
	var visit func(string)
	visit = func(n string) {
		state[n] = visiting
		stack = append(stack, n)
		for _, dep := range sortedKeys(p.Services[n].DependsOn) {
			if _, ok := p.Services[dep]; !ok {
				continue
			}
			switch state[dep] {
			case visiting:
				i := len(stack) - 1
				for stack[i] != dep {
					i--
				}
				cycle := append(append([]string{}, stack[i:]...), dep)
				key := strings.Join(sortedCopy(cycle[:len(cycle)-1]), ",")
				if !reported[key] {
					reported[key] = true
					ps.add("services."+dep+".dependsOn", "dependency cycle: %s", strings.Join(cycle, " -> "))
				}
			case unvisited:
				visit(dep)
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for _, n := range p.ServiceNames() {
		if state[n] == unvisited {
			visit(n)
		}
	}
}

func validateWatch(at string, rules []WatchRule, ps *Problems) {
	for i, w := range rules {
		w.validate(fmt.Sprintf("%s[%d]", at, i), ps)
	}
}

func (w WatchRule) validate(at string, ps *Problems) {
	switch w.Action {
	case WatchSync, WatchRebuild, WatchRestart, WatchSyncRestart, WatchSyncExec:
	default:
		ps.add(at+".action", "%q: use %s, %s, %s, %s or %s", w.Action, WatchSync, WatchRebuild, WatchRestart, WatchSyncRestart, WatchSyncExec)
	}
	if w.Path == "" {
		ps.add(at+".path", "required: the path on this machine to watch")
	}
	if w.Syncs() && !strings.HasPrefix(w.Target, "/") {
		ps.add(at+".target", "%q: a %s rule needs the absolute path in the container to sync to", w.Target, w.Action)
	}
	if w.Action == WatchSyncExec && (w.Exec == nil || len(w.Exec.Command) == 0) {
		ps.add(at+".exec.command", "required: the command a sync+exec rule runs after a sync")
	}
}
