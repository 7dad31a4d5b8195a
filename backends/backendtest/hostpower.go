package backendtest

import (
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// HostPowerCase is one host-power channel of the hardening issue's
// default-deny table, spelled the way each front end spells it. Every
// backend runs the table: refused by default with nothing created, and
// honored (or, for a declared gap, warned) once allowed. The same table
// drives the engine-level contract suite and the e2e front ends (Compose,
// deploy.yaml, the Docker API proxy with the real docker CLI).
//
// Placeholders, filled in by Expand: @DIR@ is a scratch host directory
// (holding a file named marker) that allowed cases may bind; @NS:x@ is the
// host's /proc/self/ns/x link, for checks that a namespace is the host's;
// @SINK@ is 127.0.0.1:PORT of a TCP listener the test holds, counting who
// connects (a log driver told to dial it).
type HostPowerCase struct {
	Name string
	// Field is the refused field's spec path below the service, e.g.
	// "capAdd[0]"; refusals must name it.
	Field string
	// Allow is what allows it: hostpolicy's privileged or bind variable.
	Allow string
	// App is the deploy.yaml / engine form; its command defaults to a
	// sleeper. Volumes are project volumes it mounts.
	App     spec.App
	Volumes map[string]spec.Volume
	// Compose holds the service's Compose attributes (YAML, indented by
	// 4) and ComposeTop top-level additions. "" = not expressible.
	Compose    string
	ComposeTop string
	// Docker holds `docker run` flags; DockerVolume `docker volume create`
	// flags run first (name last, added by the runner); DockerExec runs
	// `docker exec` with these flags in a plain container instead.
	Docker       []string
	DockerVolume []string
	DockerExec   []string
	// EngineAPI is a HostConfig JSON object POSTed to /containers/create
	// as a hostile client would, for what the docker CLI refuses itself.
	EngineAPI string
	// Check runs in the allowed container and must exit 0: proof the field
	// was honored. "" with NotHonoredWhy set: the runner only checks the
	// container runs, for the reason given.
	Check         string
	NotHonoredWhy string
	// NotDeployedWhy: the allowed phase is never run, for the reason given
	// (the refusal is still checked everywhere).
	NotDeployedWhy string
	// RuntimeRefuses: once the policy allows it, the runtime itself still
	// refuses (Docker refuses non-namespaced sysctls); the case then asserts
	// that refusal and that nothing was left behind.
	RuntimeRefuses bool
	// NeedsAllCaps: honoring it grants every capability, which a runtime
	// cannot do on a host whose bounding set lacks some (these test
	// machines have no CAP_SYS_RESOURCE); there the case asserts the
	// runtime's refusal instead.
	NeedsAllCaps bool
	// Unportable: some runtimes have no form for it, for the reason given.
	// Once allowed, a backend may refuse it itself (any error but the
	// policy's, leaving no container); a backend that accepts it must
	// honor it (Check) or warn a declared gap.
	Unportable string
	// Dials: honoring it makes the runtime connect to @SINK@, which the
	// contract suite waits for; refused, nothing connects.
	Dials bool
}

// Allow values.
const (
	AllowPrivileged = "CORNUS_ALLOW_PRIVILEGED=1"
	AllowBind       = "CORNUS_ALLOW_BIND_SOURCES=@DIR@"
)

// capBit checks the container's effective capability bit n.
func capBit(n string) string {
	return `e=$(grep CapEff /proc/self/status | cut -f2); test $(( (0x$e >> ` + n + `) & 1 )) = 1`
}

// hostNS checks the container is in the host's namespace of a kind.
func hostNS(kind string) string {
	return `test "$(readlink /proc/self/ns/` + kind + `)" = "@NS:` + kind + `@"`
}

// procSysWritable rewrites the container's own hostname knob with its
// value, which only a writable /proc/sys allows (busybox's test -w says
// yes to root whatever the mount).
const procSysWritable = `h=$(cat /proc/sys/kernel/hostname) && echo "$h" > /proc/sys/kernel/hostname`

// tmpfsAtHost checks /host is a tmpfs, not the device its options named
// (the docker CLI run mounts a volume it made at /host too).
const tmpfsAtHost = `grep -q ' /host tmpfs ' /proc/mounts && test -d /host`

// HostPowerCases is the default-deny table.
var HostPowerCases = []HostPowerCase{
	{
		Name: "privileged", Field: "privileged", Allow: AllowPrivileged,
		App: spec.App{Privileged: true}, Compose: "privileged: true", Docker: []string{"--privileged"},
		Check: capBit("21"), NeedsAllCaps: true,
	},
	{
		Name: "devices", Field: "devices[0]", Allow: AllowPrivileged,
		App:     spec.App{Devices: []spec.Device{{Source: "/dev/null", Target: "/dev/xnull", Permissions: "rwm"}}},
		Compose: "devices: ['/dev/null:/dev/xnull:rwm']", Docker: []string{"--device", "/dev/null:/dev/xnull:rwm"},
		Check: "test -c /dev/xnull && echo ok > /dev/xnull",
	},
	{
		Name: "device cgroup rules", Field: "deviceCgroupRules[0]", Allow: AllowPrivileged,
		// /dev/kmsg (1:11) is outside Docker's default device list.
		App: spec.App{DeviceCgroupRules: []string{"c 1:11 w"}}, Compose: "device_cgroup_rules: ['c 1:11 w']",
		Docker: []string{"--device-cgroup-rule", "c 1:11 w"},
		Check:  "mknod /tmp/kmsg c 1 11 && echo cornus-host-power-test > /tmp/kmsg",
	},
	{
		Name: "capabilities beyond the default set", Field: "capAdd[0]", Allow: AllowPrivileged,
		App:     spec.App{CapAdd: []string{"SYS_ADMIN", "SYS_MODULE", "SYS_PTRACE", "DAC_READ_SEARCH", "NET_ADMIN"}},
		Compose: "cap_add: [SYS_ADMIN, SYS_MODULE, SYS_PTRACE, DAC_READ_SEARCH, NET_ADMIN]",
		Docker:  []string{"--cap-add", "SYS_ADMIN", "--cap-add", "SYS_MODULE", "--cap-add", "SYS_PTRACE", "--cap-add", "DAC_READ_SEARCH", "--cap-add", "NET_ADMIN"},
		Check:   capBit("21") + " && " + capBit("16") + " && " + capBit("19") + " && " + capBit("2") + " && " + capBit("12"),
	},
	{
		Name: "host network", Field: "networkMode", Allow: AllowPrivileged,
		App: spec.App{NetworkMode: "host"}, Compose: "network_mode: host", Docker: []string{"--network", "host"},
		Check: hostNS("net"),
	},
	{
		Name: "host pid namespace", Field: "pidMode", Allow: AllowPrivileged,
		App: spec.App{PidMode: "host"}, Compose: "pid: host", Docker: []string{"--pid", "host"},
		Check: hostNS("pid"),
	},
	{
		Name: "host ipc namespace", Field: "ipcMode", Allow: AllowPrivileged,
		App: spec.App{IpcMode: "host"}, Compose: "ipc: host", Docker: []string{"--ipc", "host"},
		Check: hostNS("ipc"),
	},
	{
		Name: "host uts namespace", Field: "utsMode", Allow: AllowPrivileged,
		App: spec.App{UTSMode: "host"}, Compose: "uts: host", Docker: []string{"--uts", "host"},
		Check: hostNS("uts"),
	},
	{
		Name: "host user namespace", Field: "usernsMode", Allow: AllowPrivileged,
		App: spec.App{UsernsMode: "host"}, Compose: "userns_mode: host", Docker: []string{"--userns", "host"},
		Check: hostNS("user"),
	},
	{
		Name: "host cgroup namespace", Field: "cgroupnsMode", Allow: AllowPrivileged,
		App: spec.App{CgroupnsMode: "host"}, Compose: "cgroup: host", Docker: []string{"--cgroupns", "host"},
		Check: hostNS("cgroup"),
	},
	{
		Name: "seccomp unconfined", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"seccomp=unconfined"}}, Compose: "security_opt: ['seccomp=unconfined']",
		Docker: []string{"--security-opt", "seccomp=unconfined"},
		Check:  `grep -q '^Seccomp:[[:space:]]*0' /proc/self/status`,
	},
	{
		Name: "seccomp unconfined, legacy colon form", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"seccomp:unconfined"}}, Compose: "security_opt: ['seccomp:unconfined']",
		Docker: []string{"--security-opt", "seccomp:unconfined"},
		Check:  `grep -q '^Seccomp:[[:space:]]*0' /proc/self/status`,
	},
	{
		Name: "apparmor unconfined", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"apparmor=unconfined"}}, Compose: "security_opt: ['apparmor=unconfined']",
		Docker: []string{"--security-opt", "apparmor=unconfined"},
		Check:  `test ! -e /sys/module/apparmor || grep -q unconfined /proc/self/attr/current`,
	},
	{
		Name: "selinux labels disabled", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"label=disable"}}, Compose: "security_opt: ['label=disable']",
		Docker:        []string{"--security-opt", "label=disable"},
		NotHonoredWhy: "the test machines run no SELinux: the runtime accepts the option and the container runs",
	},
	{
		Name: "no-new-privileges=false", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"no-new-privileges=false"}}, Compose: "security_opt: ['no-new-privileges=false']",
		Docker: []string{"--security-opt", "no-new-privileges=false"},
		Check:  `grep -q '^NoNewPrivs:[[:space:]]*0' /proc/self/status`,
	},
	{
		Name: "system paths unmasked", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"systempaths=unconfined"}}, Compose: "security_opt: ['systempaths=unconfined']",
		Docker: []string{"--security-opt", "systempaths=unconfined"},
		Check:  `! grep -q ' /proc/keys ' /proc/mounts`,
	},
	{
		// Security round 2: podman honors unmask=, which made /proc/sys
		// writable. The check rewrites the container's own hostname knob
		// (UTS-namespaced) with its value: only a writable /proc/sys lets it.
		Name: "podman unmask ALL", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"unmask=ALL"}}, Compose: "security_opt: ['unmask=ALL']",
		Docker:     []string{"--security-opt", "unmask=ALL"},
		Check:      procSysWritable,
		Unportable: "unmask is podman's option: dockerd, cornus's OCI specs, Incus and Kubernetes have none",
	},
	{
		Name: "podman unmask /proc/sys", Field: "securityOpt[0]", Allow: AllowPrivileged,
		App: spec.App{SecurityOpt: []string{"unmask=/proc/sys"}}, Compose: "security_opt: ['unmask=/proc/sys']",
		Docker:     []string{"--security-opt", "unmask=/proc/sys"},
		Check:      procSysWritable,
		Unportable: "unmask is podman's option: dockerd, cornus's OCI specs, Incus and Kubernetes have none",
	},
	{
		// Security round 2: syslog, gelf, fluentd, splunk, awslogs, ... make
		// the daemon dial out (or use the host's credentials) on the
		// container's behalf. Refused, nothing connects to the listener.
		Name: "log driver dialling out", Field: "logging.driver", Allow: AllowPrivileged,
		App:           spec.App{Logging: &spec.Logging{Driver: "syslog", Options: map[string]string{"syslog-address": "tcp://@SINK@"}}},
		Compose:       "logging: {driver: syslog, options: {syslog-address: 'tcp://@SINK@'}}",
		Dials:         true,
		NotHonoredWhy: "the daemon's connection to the test's listener is what honoring means; the contract suite waits for it",
		Unportable:    "podman has no syslog log driver",
	},
	{
		Name: "non-namespaced sysctl", Field: "sysctls.kernel.panic", Allow: AllowPrivileged,
		App: spec.App{Sysctls: map[string]string{"kernel.panic": "30"}}, Compose: "sysctls: {kernel.panic: '30'}",
		EngineAPI: `{"Sysctls": {"kernel.panic": "30"}}`, RuntimeRefuses: true,
	},
	{
		Name: "host bind mount", Field: "mounts[0].source", Allow: AllowBind,
		App:     spec.App{Mounts: []spec.Mount{{Source: "@DIR@", Target: "/host"}}},
		Compose: "volumes: ['@DIR@:/host']", Docker: []string{"-v", "@DIR@:/host"},
		Check: "test -f /host/marker",
	},
	{
		Name: "inline volume driver options binding a host path", Field: "volumes[0].driverOpts.device", Allow: AllowBind,
		App:    spec.App{Volumes: []spec.VolumeMount{{Target: "/host", DriverOpts: map[string]string{"type": "none", "o": "bind", "device": "@DIR@"}}}},
		Docker: []string{"--mount", "type=volume,dst=/host,volume-driver=local,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=@DIR@"},
		Check:  "test -f /host/marker",
	},
	{
		Name: "volume driver options binding a host path", Field: "driverOpts.device", Allow: AllowBind,
		App:          spec.App{Volumes: []spec.VolumeMount{{Source: "hostdir", Target: "/host"}}},
		Volumes:      map[string]spec.Volume{"hostdir": {DriverOpts: map[string]string{"type": "none", "o": "bind", "device": "@DIR@"}}},
		Compose:      "volumes: ['hostdir:/host']",
		ComposeTop:   "volumes:\n  hostdir:\n    driver_opts: {type: none, o: bind, device: '@DIR@'}",
		DockerVolume: []string{"--opt", "type=none", "--opt", "o=bind", "--opt", "device=@DIR@"},
		Check:        "test -f /host/marker",
	},
	{
		Name: "volume driver options mounting a host block device", Field: "driverOpts", Allow: AllowPrivileged,
		App:            spec.App{Volumes: []spec.VolumeMount{{Source: "disk", Target: "/disk"}}},
		Volumes:        map[string]spec.Volume{"disk": {DriverOpts: map[string]string{"type": "ext4", "device": "/dev/vda"}}},
		Compose:        "volumes: ['disk:/disk']",
		ComposeTop:     "volumes:\n  disk:\n    driver_opts: {type: ext4, device: /dev/vda}",
		DockerVolume:   []string{"--opt", "type=ext4", "--opt", "device=/dev/vda"},
		NotDeployedWhy: "never mounted in tests: it would mount the machine's own disk a second time",
	},
	{
		// Security round 2: the policy let a tmpfs naming a device through
		// as taking nothing, and the incus backend mounted the device. A
		// device is host storage whatever the type; allowed, a runtime
		// mounts a tmpfs (never the device) or has no form for it.
		Name: "volume driver options: a tmpfs naming a host device", Field: "driverOpts", Allow: AllowPrivileged,
		App:          spec.App{Volumes: []spec.VolumeMount{{Source: "scratch", Target: "/host"}}},
		Volumes:      map[string]spec.Volume{"scratch": {DriverOpts: map[string]string{"type": "tmpfs", "device": "/dev/null"}}},
		Compose:      "volumes: ['scratch:/host']",
		ComposeTop:   "volumes:\n  scratch:\n    driver_opts: {type: tmpfs, device: /dev/null}",
		DockerVolume: []string{"--opt", "type=tmpfs", "--opt", "device=/dev/null"},
		Check:        tmpfsAtHost,
		Unportable:   "Kubernetes has no tmpfs volumes",
	},
	{
		Name: "inline volume driver options: a tmpfs naming a host device", Field: "volumes[0].driverOpts", Allow: AllowPrivileged,
		App:        spec.App{Volumes: []spec.VolumeMount{{Target: "/host", DriverOpts: map[string]string{"type": "tmpfs", "device": "/dev/null"}}}},
		Docker:     []string{"--mount", "type=volume,dst=/host,volume-driver=local,volume-opt=type=tmpfs,volume-opt=device=/dev/null"},
		Check:      tmpfsAtHost,
		Unportable: "Kubernetes has no tmpfs volumes",
	},
	{
		Name: "privileged postCreate hook", Field: "hooks.postCreate[0].privileged", Allow: AllowPrivileged,
		NeedsAllCaps: true,
		App:          spec.App{Hooks: &spec.Hooks{PostCreate: []spec.Hook{{Command: []string{"sh", "-c", "grep CapEff /proc/self/status > /tmp/hook"}, Privileged: true}}}},
		DockerExec:   []string{"--privileged"},
		Check:        `e=$(cut -f2 /tmp/hook); test $(( (0x$e >> 21) & 1 )) = 1`,
	},
	{
		Name: "privileged postStart hook", Field: "hooks.postStart[0].privileged", Allow: AllowPrivileged,
		NeedsAllCaps: true,
		App:          spec.App{Hooks: &spec.Hooks{PostStart: []spec.Hook{{Command: []string{"sh", "-c", "grep CapEff /proc/self/status > /tmp/hook"}, Privileged: true}}}},
		Compose:      "post_start: [{command: ['sh', '-c', 'grep CapEff /proc/self/status > /tmp/hook'], privileged: true}]",
		Check:        `e=$(cut -f2 /tmp/hook); test $(( (0x$e >> 21) & 1 )) = 1`,
	},
	{
		Name: "privileged postAttach hook", Field: "hooks.postAttach[0].privileged", Allow: AllowPrivileged,
		NeedsAllCaps: true,
		App:          spec.App{Hooks: &spec.Hooks{PostAttach: []spec.Hook{{Command: []string{"sh", "-c", "grep CapEff /proc/self/status > /tmp/hook"}, Privileged: true}}}},
		Check:        `e=$(cut -f2 /tmp/hook); test $(( (0x$e >> 21) & 1 )) = 1`,
	},
	{
		Name: "privileged preStop hook", Field: "hooks.preStop[0].privileged", Allow: AllowPrivileged,
		App:           spec.App{Hooks: &spec.Hooks{PreStop: []spec.Hook{{Command: []string{"true"}, Privileged: true}}}},
		Compose:       "pre_stop: [{command: ['true'], privileged: true}]",
		NotHonoredWhy: "a preStop hook runs at teardown, after the check; the engine's preStop test observes the hook path",
	},
	// A build's host power is refused wherever a spec with it enters,
	// built or not; allowed, the image exists and nothing is built here:
	// the contract's build case runs a host-network build.
	{
		Name: "privileged build", Field: "build.privileged", Allow: AllowPrivileged,
		App:           spec.App{Build: &spec.Build{Context: "@DIR@", Privileged: true}},
		Compose:       "build: {context: '@DIR@', privileged: true}",
		NotHonoredWhy: builtElsewhere,
	},
	{
		Name: "host network build", Field: "build.network", Allow: AllowPrivileged,
		App:           spec.App{Build: &spec.Build{Context: "@DIR@", Network: spec.BuildNetworkHost}},
		Compose:       "build: {context: '@DIR@', network: host}",
		NotHonoredWhy: builtElsewhere,
	},
	{
		Name: "build entitlements", Field: "build.entitlements[0]", Allow: AllowPrivileged,
		App:           spec.App{Build: &spec.Build{Context: "@DIR@", Entitlements: []string{spec.EntitlementNetworkHost}}},
		Compose:       "build: {context: '@DIR@', entitlements: [network.host]}",
		NotHonoredWhy: builtElsewhere,
	},
}

// builtElsewhere is why the build rows' allowed phase observes nothing.
const builtElsewhere = "the image exists, so up builds nothing; the contract's build case honors a host-network build once allowed"

// capabilityRefusal is a runtime's error for capabilities it may not
// grant: runc's "unable to apply caps: operation not permitted", crun's
// "capset: Operation not permitted".
var capabilityRefusal = regexp.MustCompile(`(?i)(apply caps|capset)[^\n]*operation not permitted`)

// CapabilityRefusal reports whether msg holds a runtime's refusal to grant
// capabilities (the only failure a NeedsAllCaps row may end in on a host
// whose bounding set lacks some).
func CapabilityRefusal(msg string) bool { return capabilityRefusal.MatchString(msg) }

// HostMissingCaps lists the capabilities the host's bounding set lacks
// (empty: a runtime can grant every capability here).
func HostMissingCaps() ([]int, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	last, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return nil, err
	}
	top, err := strconv.Atoi(strings.TrimSpace(string(last)))
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if hexBnd, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			bnd, err := strconv.ParseUint(strings.TrimSpace(hexBnd), 16, 64)
			if err != nil {
				return nil, err
			}
			var missing []int
			for c := 0; c <= top; c++ {
				if bnd&(1<<c) == 0 {
					missing = append(missing, c)
				}
			}
			return missing, nil
		}
	}
	return nil, errors.New("no CapBnd line in /proc/self/status")
}

// HostEnv fills a case's placeholders: dir for @DIR@, the host's
// namespaces, and the listener behind @SINK@.
type HostEnv struct {
	Dir  string
	ns   map[string]string
	sink *sink
}

// NewHostEnv reads the host's namespace links, makes dir/marker and starts
// the @SINK@ listener (Close stops it; otherwise it lives as long as the
// test binary).
func NewHostEnv(dir string) (HostEnv, error) {
	h := HostEnv{Dir: dir, ns: map[string]string{}}
	for _, kind := range []string{"net", "pid", "ipc", "uts", "user", "cgroup"} {
		l, err := os.Readlink("/proc/self/ns/" + kind)
		if err != nil {
			return h, err
		}
		h.ns[kind] = l
	}
	if err := os.WriteFile(dir+"/marker", []byte("host\n"), 0o644); err != nil {
		return h, err
	}
	var err error
	h.sink, err = newSink()
	return h, err
}

// Close stops the @SINK@ listener and drops the connections it holds.
func (h HostEnv) Close() {
	if h.sink != nil {
		h.sink.close()
	}
}

// Dialed is how many connections @SINK@ has accepted.
func (h HostEnv) Dialed() int {
	if h.sink == nil {
		return 0
	}
	return h.sink.count()
}

// Expand fills the placeholders in s.
func (h HostEnv) Expand(s string) string {
	s = strings.ReplaceAll(s, "@DIR@", h.Dir)
	if h.sink != nil {
		s = strings.ReplaceAll(s, "@SINK@", h.sink.ln.Addr().String())
	}
	for kind, l := range h.ns {
		s = strings.ReplaceAll(s, "@NS:"+kind+"@", l)
	}
	return s
}

// ExpandAll fills the placeholders in each of ss.
func (h HostEnv) ExpandAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = h.Expand(s)
	}
	return out
}

// ExpandApp fills the placeholders in an app's bind sources, driver and
// log options, and in volumes' driver options.
func (h HostEnv) ExpandApp(a spec.App, vols map[string]spec.Volume) (spec.App, map[string]spec.Volume) {
	a = spec.DeepCopy(a)
	if a.Build != nil {
		a.Build.Context = h.Expand(a.Build.Context)
	}
	for i := range a.Mounts {
		a.Mounts[i].Source = h.Expand(a.Mounts[i].Source)
	}
	if a.Logging != nil {
		for k, v := range a.Logging.Options {
			a.Logging.Options[k] = h.Expand(v)
		}
	}
	for i := range a.Volumes {
		for k, v := range a.Volumes[i].DriverOpts {
			a.Volumes[i].DriverOpts[k] = h.Expand(v)
		}
	}
	out := map[string]spec.Volume{}
	for name, v := range vols {
		v = spec.DeepCopy(v)
		for k, o := range v.DriverOpts {
			v.DriverOpts[k] = h.Expand(o)
		}
		out[name] = v
	}
	return a, out
}
