package hostpolicy

import (
	"maps"
	"slices"
	"strings"
)

// MountKind is what the host mounts for a local-driver volume.
type MountKind int

const (
	// MountPlain is a mount with no type and no device, a directory of
	// the runtime's own.
	MountPlain MountKind = iota
	// MountBind gives the container Device, a host path (o=bind, o=rbind,
	// o=move, type=none, or podman's type=bind).
	MountBind
	// MountTmpfs is a tmpfs; its device, if any, is a name the kernel
	// ignores, and a backend must never mount it as storage.
	MountTmpfs
	// MountDevice is mounted by the host kernel: Device with Type (a block
	// device, an NFS export, an overlay, ...).
	MountDevice
)

// LocalMount is what the local volume driver's options (Docker's and
// podman's local driver, cornus's own volume stores) make the host do.
// Backends read options through it so they mount exactly what the policy
// checked.
type LocalMount struct {
	Kind    MountKind
	Device  string // the host path bound (MountBind) or mounted (MountDevice)
	Type    string
	Options string // the o option: mount flags and filesystem data
}

// tmpfsSources are the conventional device names of a tmpfs volume
// (Docker documents device=tmpfs); any other device names host storage.
var tmpfsSources = []string{"", "tmpfs", "none"}

// LocalDriverMount classifies a local-driver volume's options. Keys are
// matched without regard to case: podman accepts "Device" as "device".
func LocalDriverMount(opts map[string]string) LocalMount {
	m := LocalMount{Device: option(opts, "device"), Type: option(opts, "type"), Options: option(opts, "o")}
	flags := strings.Split(m.Options, ",")
	switch {
	case m.Type == "none" || m.Type == "bind" || slices.Contains(flags, "bind") || slices.Contains(flags, "rbind") || slices.Contains(flags, "move"):
		m.Kind = MountBind
	case m.Type == "tmpfs":
		m.Kind = MountTmpfs
	case m.Type == "" && m.Device == "":
		m.Kind = MountPlain
	default:
		m.Kind = MountDevice
	}
	return m
}

// option is opts[key], whatever the key's case: the exact key first,
// then the other spellings in sorted order, so every caller reads the same
// value.
func option(opts map[string]string, key string) string {
	if v := opts[key]; v != "" {
		return v
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if strings.EqualFold(k, key) && opts[k] != "" {
			return opts[k]
		}
	}
	return ""
}

// driverOptProblems: a bind's device is a host path the bind rule checks;
// any other device is host storage the host kernel mounts (a block device,
// an NFS export), whatever the type; a tmpfs takes nothing from the host
// when its device is only a name. Other drivers are plugins the host's
// operator installed.
func (p Policy) driverOptProblems(at, driver string, opts map[string]string) []Problem {
	if driver != "" && driver != "local" {
		return nil
	}
	m := LocalDriverMount(opts)
	switch {
	case m.Kind == MountBind && m.Device != "":
		return p.bindProblem(at+".device", m.Device)
	case m.Kind == MountBind, m.Kind == MountPlain:
		return nil // a bind of nothing: the daemon refuses it
	case m.Kind == MountTmpfs && slices.Contains(tmpfsSources, m.Device):
		return nil
	case p.AllowPrivileged:
		return nil
	case m.Kind == MountTmpfs:
		return []Problem{p.power(at, "a tmpfs volume naming device "+m.Device+" names host storage (a tmpfs needs none: use device: tmpfs)")}
	}
	what := m.Device
	switch {
	case what == "":
		what = "a " + m.Type + " filesystem"
	case m.Type != "":
		what += " (type " + m.Type + ")"
	}
	return []Problem{p.power(at, "mounting "+what+" on the host")}
}
