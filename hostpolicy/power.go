package hostpolicy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// This file is the one definition of host power: the fields of an app or
// volume that let a container act on the host rather than on itself.

// DefaultCapabilities is Docker's default capability set; adding one of
// these (e.g. back after cap_drop: ALL) takes nothing from the host.
var DefaultCapabilities = []string{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// namespacedSysctls are the sysctls a container's own namespaces isolate
// (Docker's list); prefixes end with a dot. net.* is namespaced only with
// the container's own network namespace, kernel.*name only with its own UTS
// namespace, the IPC ones only with its own IPC namespace.
var namespacedSysctls = []struct {
	name string
	ns   func(a spec.App) bool
}{
	{"kernel.msgmax", ownIPC}, {"kernel.msgmnb", ownIPC}, {"kernel.msgmni", ownIPC}, {"kernel.sem", ownIPC},
	{"kernel.shmall", ownIPC}, {"kernel.shmmax", ownIPC}, {"kernel.shmmni", ownIPC}, {"kernel.shm_rmid_forced", ownIPC},
	{"fs.mqueue.", ownIPC},
	{"kernel.domainname", ownUTS}, {"kernel.hostname", ownUTS},
	{"net.", ownNet},
}

func ownIPC(a spec.App) bool { return a.IpcMode != "host" }
func ownUTS(a spec.App) bool { return a.UTSMode != "host" }
func ownNet(a spec.App) bool { return a.NetworkMode != "host" }

func (p Policy) appProblems(at string, a spec.App) []Problem {
	var ps []Problem
	for i, m := range a.Mounts {
		ps = append(ps, p.bindProblem(fmtIndex(at+".mounts", i)+".source", m.Source)...)
	}
	for i, v := range a.Volumes {
		if len(v.DriverOpts) > 0 {
			ps = append(ps, p.driverOptProblems(fmtIndex(at+".volumes", i)+".driverOpts", v.Driver, v.DriverOpts)...)
		}
	}
	if p.AllowPrivileged {
		return ps
	}
	power := func(path, format string, args ...any) { ps = append(ps, p.power(path, fmt.Sprintf(format, args...))) }
	if a.Privileged {
		power(at+".privileged", "privileged mode gives the container every capability and device of the host")
	}
	for i, d := range a.Devices {
		power(fmtIndex(at+".devices", i), "passing host device %s into the container", d.Source)
	}
	for i, r := range a.DeviceCgroupRules {
		power(fmtIndex(at+".deviceCgroupRules", i), "device cgroup rule %q lets the container use host devices", r)
	}
	for i, c := range a.CapAdd {
		if name := capName(c); !slices.Contains(DefaultCapabilities, name) {
			power(fmtIndex(at+".capAdd", i), "capability %s is beyond Docker's default set", name)
		}
	}
	for _, ns := range []struct{ field, mode, what string }{
		{"networkMode", a.NetworkMode, "network"}, {"pidMode", a.PidMode, "process"}, {"ipcMode", a.IpcMode, "IPC"},
		{"utsMode", a.UTSMode, "UTS"}, {"usernsMode", a.UsernsMode, "user"}, {"cgroupnsMode", a.CgroupnsMode, "cgroup"},
	} {
		if ns.mode == "host" {
			power(at+"."+ns.field, "%s: host shares the host's %s namespace", ns.field, ns.what)
		}
	}
	for i, o := range a.SecurityOpt {
		if why := unconfined(o); why != "" {
			power(fmtIndex(at+".securityOpt", i), "%q %s", o, why)
		}
	}
	if a.Logging != nil {
		if field, why := logPower(*a.Logging); why != "" {
			power(at+".logging."+field, "%s", why)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Sysctls)) {
		if !sysctlNamespaced(a, k) {
			power(at+".sysctls."+k, "sysctl %s is not namespaced for this container: it would change the host kernel", k)
		}
	}
	if a.Build != nil {
		ps = append(ps, p.BuildProblems(at+".build", *a.Build)...)
	}
	ps = append(ps, p.hookProblems(at, a)...)
	return ps
}

// BuildProblems refuses what lets a build's RUN steps act on the host:
// privileged (RUN --security=insecure), the host's network, and the
// entitlements that grant them.
func (p Policy) BuildProblems(at string, b spec.Build) []Problem {
	if p.AllowPrivileged {
		return nil
	}
	var ps []Problem
	if b.Privileged {
		ps = append(ps, p.power(at+".privileged", "a privileged build runs RUN --security=insecure steps with every capability and device of the host"))
	}
	if b.Network == spec.BuildNetworkHost {
		ps = append(ps, p.power(at+".network", "network: host runs the build's RUN steps in the host's network namespace"))
	}
	for i, e := range b.Entitlements {
		// Every BuildKit entitlement (network.host, security.insecure,
		// device) grants RUN steps something of the host's.
		ps = append(ps, p.power(fmtIndex(at+".entitlements", i), fmt.Sprintf("entitlement %s lets RUN steps act on the host", e)))
	}
	return ps
}

// CheckEntitlements checks the entitlements a build asks BuildKit for
// (docker buildx's --allow, through the Docker API proxy).
func (p Policy) CheckEntitlements(at string, ents []string) error {
	return denied(p.BuildProblems(at, spec.Build{Entitlements: ents}))
}

// hookProblems refuses privileged hooks: each runs as a privileged exec.
func (p Policy) hookProblems(at string, a spec.App) []Problem {
	if a.Hooks == nil || p.AllowPrivileged {
		return nil
	}
	var ps []Problem
	for _, hs := range []struct {
		event string
		hooks []spec.Hook
	}{{"postCreate", a.Hooks.PostCreate}, {"postStart", a.Hooks.PostStart}, {"postAttach", a.Hooks.PostAttach}, {"preStop", a.Hooks.PreStop}} {
		for i, h := range hs.hooks {
			if h.Privileged {
				ps = append(ps, p.power(fmtIndex(at+".hooks."+hs.event, i)+".privileged", "a privileged hook runs with every capability and device of the host"))
			}
		}
	}
	return ps
}

// volumeProblems checks a volume's driver options: the local driver mounts
// whatever they name on the host.
func (p Policy) volumeProblems(at string, v spec.Volume) []Problem {
	if v.External || len(v.DriverOpts) == 0 {
		return nil
	}
	return p.driverOptProblems(at+".driverOpts", v.Driver, v.DriverOpts)
}

// capName normalizes a capability: upper case, no CAP_ prefix.
func capName(c string) string {
	return strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(c)), "CAP_")
}

func sysctlNamespaced(a spec.App, key string) bool {
	for _, s := range namespacedSysctls {
		if key == s.name || (strings.HasSuffix(s.name, ".") && strings.HasPrefix(key, s.name)) {
			return s.ns(a)
		}
	}
	return false
}
