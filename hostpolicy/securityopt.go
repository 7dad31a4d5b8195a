package hostpolicy

import (
	"strconv"
	"strings"
)

// unconfined says how a security option weakens confinement, or "" for
// the forms known to take nothing from the host. An option the policy
// does not know is refused too: a runtime that honors it might unconfine
// the container, as podman's unmask= does. dockerd and podman accept
// key=value and the legacy key:value form (and dockerd a bare "disable").
func unconfined(opt string) string {
	switch opt {
	case "no-new-privileges":
		return ""
	case "disable":
		return "disables SELinux labelling (dockerd's legacy spelling of label=disable)"
	}
	k, v, ok := strings.Cut(opt, "=")
	if !ok {
		k, v, ok = strings.Cut(opt, ":")
	}
	if !ok {
		return "is not a security option cornus knows (KEY=VALUE)"
	}
	switch strings.ToLower(k) {
	case "seccomp":
		switch v {
		case "builtin", "default":
			return ""
		case "unconfined":
			return "disables seccomp confinement"
		}
		return "replaces the default seccomp profile"
	case "apparmor":
		switch v {
		case "docker-default", "runtime/default":
			return ""
		case "unconfined":
			return "disables AppArmor confinement"
		}
		return "replaces the default AppArmor profile"
	case "label":
		return selinuxLabel(v)
	case "no-new-privileges":
		if b, err := strconv.ParseBool(v); err != nil {
			return "has a value cornus does not know (true or false)"
		} else if !b {
			return "lets processes gain privileges (setuid binaries)"
		}
		return ""
	case "writable-cgroups":
		if b, err := strconv.ParseBool(v); err != nil {
			return "has a value cornus does not know (true or false)"
		} else if b {
			return "makes the host's cgroup tree writable"
		}
		return ""
	case "systempaths":
		if v == "unconfined" {
			return "unmasks the host's /proc and /sys paths"
		}
		return "has a value cornus does not know (unconfined)"
	case "mask":
		return "" // podman: hides more paths, takes nothing
	case "unmask":
		if v == "ALL" {
			return "unmasks every path podman masks or makes read-only: the host kernel's /proc/sys and /sys knobs become writable"
		}
		return "unmasks " + v + ", a host kernel path podman masks or makes read-only"
	case "proc-opts":
		return "sets the mount options of the container's /proc, which cornus does not vet"
	}
	return "is not a security option cornus knows: a runtime that honors it might weaken confinement"
}

// selinuxLabel vets label=VALUE: a level without ranges is the
// container's own; the rest changes what the container may reach.
func selinuxLabel(v string) string {
	if v == "disable" {
		return "disables SELinux labelling"
	}
	if v == "nested" {
		return "lets the container change SELinux labels"
	}
	k, val, ok := strings.Cut(v, ":")
	if !ok {
		k, val, _ = strings.Cut(v, "=")
	}
	switch k {
	case "level":
		if strings.ContainsAny(val, "-.") {
			return "sets an SELinux level range: a container with many categories reaches other containers' files"
		}
		return ""
	case "type":
		return "sets the SELinux process type to " + val
	case "user", "role":
		return "sets the SELinux " + k + " to " + val
	case "filetype":
		return "sets the SELinux type of the container's files to " + val
	}
	return "is not an SELinux label option cornus knows (level, type, user, role, filetype, disable, nested)"
}
