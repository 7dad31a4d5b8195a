package translate

import (
	"regexp"
	"strings"
)

// composeNames maps spec field names to the Compose attribute the user
// wrote, where the generic camelCase → snake_case rule is not enough.
var composeNames = map[string]string{
	"env":          "environment",
	"pidMode":      "pid",
	"ipcMode":      "ipc",
	"utsMode":      "uts",
	"cgroupnsMode": "cgroup",
	"dnsOptions":   "dns_opt",
	"replicas":     "deploy.replicas",
	"resources":    "deploy.resources",
	"egress":       "x-cornus-egress",
	"container":    "target",
	"host":         "published",
	"hostEnd":      "published",
	"hostIP":       "host_ip",
	"mounts":       "volumes",
	"tmpfs":        "volumes",
	"subnets":      "ipam.config",
	"hooks":        "post_start",
	"ipv4":         "ipv4_address",
	"ipv6":         "ipv6_address",
	"devcontainer": "x-cornus-devcontainer",
}

var (
	reIndex = regexp.MustCompile(`\[\d+\]`)
	reUpper = regexp.MustCompile(`([a-z0-9])([A-Z])`)
)

// ComposePath rewrites a spec field path (from spec.Validate) into the
// Compose attribute path a user of a Compose file recognises:
// services.web.extraHosts.db → services.web.extra_hosts.db,
// services.web.ports[0].container → services.web.ports[0].target.
// List indices that do not survive translation (mounts and volumes share
// Compose's volumes list) are dropped.
func ComposePath(path string) string {
	// Compose's post_start and pre_stop lists are the spec's hooks.
	path = strings.Replace(path, ".hooks.postStart", ".post_start", 1)
	path = strings.Replace(path, ".hooks.preStop", ".pre_stop", 1)
	parts := strings.Split(path, ".")
	for i, part := range parts {
		if i < 2 && parts[0] == "services" {
			continue // "services" and the service name
		}
		if i == 1 && (parts[0] == "networks" || parts[0] == "volumes") {
			continue // the resource key
		}
		name, index := part, ""
		if loc := reIndex.FindStringIndex(part); loc != nil {
			name, index = part[:loc[0]], part[loc[0]:]
		}
		if c, ok := composeNames[name]; ok {
			if name == "mounts" || name == "tmpfs" {
				index = ""
			}
			name = c
		} else {
			name = strings.ToLower(reUpper.ReplaceAllString(name, "${1}_${2}"))
		}
		if name == "networks" && parts[0] == "services" {
			index = "" // a list in the spec, a map in Compose
		}
		parts[i] = name + index
	}
	return strings.Join(parts, ".")
}
