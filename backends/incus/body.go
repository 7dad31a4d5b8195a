package incus

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// plan is everything Create resolved for one container: the spec plus
// what needed I/O (the image, addresses, ports, volumes, directories).
type plan struct {
	Spec      backends.ContainerSpec
	ID        string // the container ID (keyID)
	Name      string // the Incus instance name
	Image     string // fingerprint
	ImageID   string
	Argv      []string // the main process, for display
	Env       []string // the process environment (image's and spec's)
	InitPath  string   // the init binary, as the container sees it
	BinDir    string   // host directory holding the init binary
	RecordDir string   // host record directory
	Pool      string
	Shift     bool // share host directories through idmapped mounts
	NICs      []nicPlan
	Ports     []backends.PortBinding
	Disks     []diskPlan
	Devices   []devicePlan
	Anonymous []string // anonymous volumes made for this container
}

type nicPlan struct {
	Bridge  string // Incus network
	Network string // runtime name
	IP      string
	Prefix  int
	Gateway string
	Aliases []string
}

// diskPlan is a volume (Pool+Volume) or a host path (Source) mounted at
// Path.
type diskPlan struct {
	Volume   string
	Source   string
	Path     string
	ReadOnly bool
	// Block: Source is a host block device whose filesystem Incus mounts
	// (with MountOptions), not a directory.
	Block        bool
	MountOptions string
	// Unshifted: Source's file system takes no idmapped mount (a
	// client-local mount's FUSE or 9p): bound as it is.
	Unshifted bool
}

type devicePlan struct {
	Type   string // unix-char or unix-block
	Source string
	Path   string
}

// instanceBody maps a plan onto POST /1.0/instances. It does no I/O.
func instanceBody(p plan) (instancesPost, error) {
	cfg, err := instanceConfig(p)
	if err != nil {
		return instancesPost{}, err
	}
	body := instancesPost{
		Name: p.Name, Type: "container", Source: instanceSource{Type: "image", Fingerprint: p.Image},
		Config: cfg, Devices: instanceDevices(p), Profiles: []string{"default"},
		Description: "cornus " + p.Spec.Name,
	}
	return body, checkBodyText(body)
}

// instanceConfig is the instance's config: cornus's record of the
// container (keys under user.cornus.), its environment, limits, and how
// it starts and stops.
func instanceConfig(p plan) (map[string]string, error) {
	cs := p.Spec
	cfg := map[string]string{
		keyManaged: "true", keyID: p.ID, keyName: cs.Name, keyProject: cs.Project, keyApp: cs.App,
		keyReplica: strconv.Itoa(cs.Replica), keyImage: cs.Image, keyImageID: p.ImageID, keyDir: p.RecordDir,
	}
	labels, _ := json.Marshal(cs.Labels)
	cfg[keyLabels] = string(labels)
	argv, _ := json.Marshal(p.Argv)
	cfg[keyCommand] = string(argv)
	if len(p.NICs) > 0 {
		nets, _ := json.Marshal(p.NICs)
		cfg[keyNetworks] = string(nets)
	}
	if len(p.Ports) > 0 {
		ports, _ := json.Marshal(p.Ports)
		cfg[keyPorts] = string(ports)
	}
	if len(cs.ExtraHosts) > 0 {
		extra, _ := json.Marshal(cs.ExtraHosts)
		cfg[keyExtraHosts] = string(extra)
	}
	if len(p.Anonymous) > 0 {
		cfg[keyAnonymous] = strings.Join(p.Anonymous, ",")
	}
	for _, kv := range p.Env {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" {
			cfg["environment."+k] = v
		}
	}
	if err := limits(cfg, cs); err != nil {
		return nil, err
	}
	if cs.Privileged {
		cfg["security.privileged"] = "true"
	}
	switch cs.Restart.Name {
	case spec.RestartAlways:
		cfg["boot.autostart"] = "true" // Docker starts these with the daemon
	case "", spec.RestartNo, spec.RestartOnFailure:
		cfg["boot.autostart"] = "false"
	}
	if cs.StopTimeout != nil {
		cfg["boot.host_shutdown_timeout"] = strconv.Itoa(int(math.Ceil(cs.StopTimeout.Seconds())) + 5)
	}
	raw, err := rawLXC(p)
	if err != nil {
		return nil, err
	}
	cfg["raw.lxc"] = raw
	return cfg, nil
}

// instanceDevices are the instance's devices: cornus's binaries and
// records, NICs, published ports and loopback sockets as proxy devices,
// disks and devices.
func instanceDevices(p plan) map[string]map[string]string {
	devices := map[string]map[string]string{
		"cornus-bin":     {"type": "disk", "source": p.BinDir, "path": ctrBinDir, "readonly": "true"},
		"cornus-records": {"type": "disk", "source": p.RecordDir, "path": ctrRecords + "/" + p.Name},
	}
	if p.Shift {
		devices["cornus-records"]["shift"] = "true"
	}
	if len(p.NICs) == 0 {
		devices["eth0"] = map[string]string{"type": "none"} // no profile's NIC either
	}
	for i, n := range p.NICs {
		devices[fmt.Sprintf("eth%d", i)] = map[string]string{"type": "nic", "network": n.Bridge, "name": fmt.Sprintf("eth%d", i), "ipv4.address": n.IP}
	}
	for i, port := range p.Ports {
		listen := port.HostIP
		if listen == "" {
			listen = "0.0.0.0"
		}
		if strings.Contains(listen, ":") {
			listen = "[" + listen + "]"
		}
		connect := "127.0.0.1"
		devices[fmt.Sprintf("port%d", i)] = map[string]string{
			"type": "proxy", "bind": "host",
			"listen":  fmt.Sprintf("%s:%s:%d", port.Protocol, listen, port.HostPort),
			"connect": fmt.Sprintf("%s:%s:%d", port.Protocol, connect, port.ContainerPort),
		}
	}
	// A companion beside the app serves these on the host: the proxy
	// listens in the instance, on its loopback, and connects on the host.
	for i, l := range p.Spec.Loopback {
		devices[fmt.Sprintf("loopback%d", i)] = map[string]string{
			"type": "proxy", "bind": "instance",
			"listen":  fmt.Sprintf("tcp:127.0.0.1:%d", l.Port),
			"connect": "unix:" + l.Socket,
		}
	}
	for i, d := range p.Disks {
		dev := map[string]string{"type": "disk", "path": d.Path}
		if d.Volume != "" {
			dev["pool"], dev["source"] = p.Pool, d.Volume
		} else {
			dev["source"] = d.Source
			if d.Block && d.MountOptions != "" {
				dev["raw.mount.options"] = d.MountOptions
			}
			if p.Shift && !d.Block && !d.Unshifted {
				dev["shift"] = "true"
			}
		}
		if d.ReadOnly {
			dev["readonly"] = "true"
		}
		devices[fmt.Sprintf("disk%d", i)] = dev
	}
	for i, d := range p.Devices {
		devices[fmt.Sprintf("dev%d", i)] = map[string]string{"type": d.Type, "source": d.Source, "path": d.Path}
	}
	return devices
}

// rawLXC is the LXC configuration Incus passes through: cornus's init as
// the container's init (its arguments hold no spaces: LXC splits on
// them), SIGTERM to stop it (LXC's default, SIGPWR, means nothing to
// it), the hostname, static addresses (apps run no DHCP client) and the
// seccomp profile dropped for seccomp=unconfined. lxcConfig refuses any
// value that would break its line.
func rawLXC(p plan) (string, error) {
	var c lxcConfig
	c.set("lxc.init.cmd", p.InitPath+" monitor "+Name+" "+p.Name)
	c.set("lxc.signal.halt", "SIGTERM")
	if h := p.Spec.Hostname; h != "" {
		c.set("lxc.uts.name", h)
	}
	for i, n := range p.NICs {
		c.set(fmt.Sprintf("lxc.net.%d.ipv4.address", i), fmt.Sprintf("%s/%d", n.IP, n.Prefix))
		if i == 0 {
			c.set(fmt.Sprintf("lxc.net.%d.ipv4.gateway", i), n.Gateway)
		}
	}
	if p.Spec.Security.Seccomp == "unconfined" {
		c.set("lxc.seccomp.profile", "")
	}
	return c.text()
}

// limits maps resources, sysctls and ulimits onto Incus's limits.*,
// linux.sysctl.* and limits.kernel.* keys.
func limits(cfg map[string]string, cs backends.ContainerSpec) error {
	r := cs.Resources
	if r.Memory > 0 {
		cfg["limits.memory"] = strconv.FormatInt(r.Memory, 10) + "B"
	}
	if r.Pids > 0 {
		cfg["limits.processes"] = strconv.FormatInt(r.Pids, 10)
	}
	if r.CPUs > 0 {
		// A hard quota: CPUs' worth of each 100 ms period.
		cfg["limits.cpu.allowance"] = fmt.Sprintf("%dms/100ms", max(1, int(math.Round(r.CPUs*100))))
	}
	for _, k := range slices.Sorted(maps.Keys(cs.Sysctls)) {
		if !namespacedSysctl(k) {
			return fmt.Errorf("sysctls.%s: not a namespaced sysctl: an Incus container can only set the ones of its own namespaces (net.*, kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*): %w", k, errInvalid)
		}
		cfg["linux.sysctl."+k] = cs.Sysctls[k]
	}
	for _, u := range cs.Ulimits {
		name, ok := ulimitKeys[u.Name]
		if !ok {
			return fmt.Errorf("ulimits.%s: not a resource limit Incus knows (%s): %w", u.Name, strings.Join(slices.Sorted(maps.Keys(ulimitKeys)), ", "), errInvalid)
		}
		if u.Soft > u.Hard {
			return fmt.Errorf("ulimits.%s: soft limit %d is above the hard limit %d: %w", u.Name, u.Soft, u.Hard, errInvalid)
		}
		cfg["limits.kernel."+name] = limitValue(u.Soft) + ":" + limitValue(u.Hard)
	}
	return nil
}

func limitValue(v int64) string {
	if v < 0 {
		return "unlimited"
	}
	return strconv.FormatInt(v, 10)
}

// ulimitKeys maps Docker's ulimit names to Incus's limits.kernel.* names.
var ulimitKeys = map[string]string{
	"as": "as", "core": "core", "cpu": "cpu", "data": "data", "fsize": "fsize", "locks": "locks",
	"memlock": "memlock", "msgqueue": "msgqueue", "nice": "nice", "nofile": "nofile", "nproc": "nproc",
	"rss": "rss", "rtprio": "rtprio", "rttime": "rttime", "sigpending": "sigpending", "stack": "stack",
}

// namespacedSysctl reports whether a sysctl belongs to a namespace a
// container has of its own (Docker's list).
func namespacedSysctl(k string) bool {
	switch {
	case strings.HasPrefix(k, "net."), strings.HasPrefix(k, "fs.mqueue."), strings.HasPrefix(k, "kernel.shm"),
		strings.HasPrefix(k, "kernel.msg"), k == "kernel.sem", k == "kernel.domainname", k == "kernel.hostname":
		return true
	}
	return false
}
