package backends

import (
	"strconv"
	"strings"
)

// Security is a container's confinement beyond its capabilities: the
// securityOpt list, parsed once (Docker's KEY=VALUE, or the legacy
// KEY:VALUE) so that every backend maps the same values.
type Security struct {
	NoNewPrivileges bool
	// Seccomp: "" the runtime's default profile, "unconfined" none, else a
	// profile as the spec gave it (its JSON, or a file name).
	Seccomp string
	// AppArmor: "" the runtime's default, "unconfined", or a profile name.
	AppArmor string
	// SELinux are label options in order: "disable", "nested", or
	// "user:U", "role:R", "type:T", "level:L", "filetype:T".
	SELinux []string
	// SystemPathsUnconfined: the runtime masks no /proc or /sys path and
	// makes none read-only (systempaths=unconfined).
	SystemPathsUnconfined bool
	// Mask are more paths to mask; Unmask paths of the runtime's masked
	// or read-only ones to leave visible and writable ("ALL": every one).
	// Both are podman's (mask=, unmask=; paths joined by ':').
	Mask, Unmask []string
	// WritableCgroups mounts the container's cgroup tree read-write.
	WritableCgroups bool
}

// SecurityKeys are the securityOpt keys Security holds.
var SecurityKeys = []string{"no-new-privileges", "seccomp", "apparmor", "label", "systempaths", "mask", "unmask", "writable-cgroups"}

// parseSecurity parses securityOpt; field names the list in errors.
func parseSecurity(field string, opts []string) (Security, error) {
	var s Security
	for i, o := range opts {
		at := field + "[" + strconv.Itoa(i) + "]"
		switch o {
		case "no-new-privileges":
			s.NoNewPrivileges = true
			continue
		case "disable": // dockerd's legacy spelling of label=disable
			s.SELinux = append(s.SELinux, "disable")
			continue
		}
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			k, v, ok = strings.Cut(o, ":")
		}
		if !ok || v == "" {
			return s, invalid("%s: %q is not KEY=VALUE (keys: %s)", at, o, strings.Join(SecurityKeys, ", "))
		}
		switch k {
		case "no-new-privileges", "writable-cgroups":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return s, invalid("%s: %q: want %s=true or %[3]s=false", at, o, k)
			}
			if k == "no-new-privileges" {
				s.NoNewPrivileges = b
			} else {
				s.WritableCgroups = b
			}
		case "seccomp":
			if v == "default" || v == "builtin" {
				v = ""
			}
			s.Seccomp = v
		case "apparmor":
			s.AppArmor = v
		case "label":
			s.SELinux = append(s.SELinux, v)
		case "systempaths":
			if v != "unconfined" {
				return s, invalid("%s: %q: the one value is systempaths=unconfined", at, o)
			}
			s.SystemPathsUnconfined = true
		case "mask":
			s.Mask = append(s.Mask, strings.Split(v, ":")...)
		case "unmask":
			s.Unmask = append(s.Unmask, strings.Split(v, ":")...)
		default:
			return s, invalid("%s: %q: no such security option (keys: %s)", at, o, strings.Join(SecurityKeys, ", "))
		}
	}
	return s, nil
}

// DockerOpts is s in Docker's security_opt form, for runtimes that take
// it (systempaths=unconfined is the docker CLI's: the Engine API says it
// with empty masked and read-only path lists, SystemPathsUnconfined).
func (s Security) DockerOpts() []string {
	var out []string
	if s.NoNewPrivileges {
		out = append(out, "no-new-privileges=true")
	}
	if s.Seccomp != "" {
		out = append(out, "seccomp="+s.Seccomp)
	}
	if s.AppArmor != "" {
		out = append(out, "apparmor="+s.AppArmor)
	}
	for _, l := range s.SELinux {
		out = append(out, "label="+l)
	}
	if len(s.Mask) > 0 {
		out = append(out, "mask="+strings.Join(s.Mask, ":"))
	}
	if len(s.Unmask) > 0 {
		out = append(out, "unmask="+strings.Join(s.Unmask, ":"))
	}
	if s.WritableCgroups {
		out = append(out, "writable-cgroups=true")
	}
	return out
}

// CapabilityNumbers are the Linux capabilities by Docker's names (upper
// case, no CAP_ prefix).
var CapabilityNumbers = map[string]int{
	"CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6,
	"SETUID": 7, "SETPCAP": 8, "LINUX_IMMUTABLE": 9, "NET_BIND_SERVICE": 10, "NET_BROADCAST": 11, "NET_ADMIN": 12,
	"NET_RAW": 13, "IPC_LOCK": 14, "IPC_OWNER": 15, "SYS_MODULE": 16, "SYS_RAWIO": 17, "SYS_CHROOT": 18,
	"SYS_PTRACE": 19, "SYS_PACCT": 20, "SYS_ADMIN": 21, "SYS_BOOT": 22, "SYS_NICE": 23, "SYS_RESOURCE": 24,
	"SYS_TIME": 25, "SYS_TTY_CONFIG": 26, "MKNOD": 27, "LEASE": 28, "AUDIT_WRITE": 29, "AUDIT_CONTROL": 30,
	"SETFCAP": 31, "MAC_OVERRIDE": 32, "MAC_ADMIN": 33, "SYSLOG": 34, "WAKE_ALARM": 35, "BLOCK_SUSPEND": 36,
	"AUDIT_READ": 37, "PERFMON": 38, "BPF": 39, "CHECKPOINT_RESTORE": 40,
}

// canonicalCaps turns capability names of any case, with or without CAP_,
// into Docker's (NET_ADMIN; ALL stays ALL); field names the list in
// errors.
func canonicalCaps(field string, caps []string) ([]string, error) {
	var out []string
	for i, c := range caps {
		name := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(c)), "CAP_")
		if _, ok := CapabilityNumbers[name]; !ok && name != "ALL" {
			return nil, invalid("%s[%d]: %q is not a Linux capability (NET_ADMIN, CAP_SYS_TIME, ALL, ...)", field, i, c)
		}
		out = append(out, name)
	}
	return out, nil
}
